import Foundation
import Logging

/// The pipeline's jobs: fetch (the original), process (one per processor prefix), deliver (the
/// processed image, stored).
typealias FetchJob = SharedJob<HashedKey<FetchJobKey>, FetchedSource>
typealias ProcessJob = SharedJob<HashedKey<ProcessJobKey>, ProcessedImage>
typealias DeliverJob = SharedJob<HashedKey<DeliverJobKey>, DeliveredImage>

/// The stages of a miss, each a ``SharedJob`` in a registry of the pipeline: fetch (the original
/// from the original cache's memory, or its bytes from its disk or loaded; the bytes are decoded
/// once per decode size for all its requests, ``FetchedSource/decodes``), process (one per processor
/// prefix; a first step that shrinks is folded into the decode, see ``DecodePlan``), deliver (the
/// processed image, stored in the target cache once for all its requests).
extension ImagePipeline {
    /// Subscribes to the last stage for `request`, starting it (and the stages it needs) when no
    /// request shares it. Returns the subscription, or `nil` when `completion` was already called.
    /// `memoryMiss`: the request's miss of the target memory cache (`nil`: it did not look); a
    /// stage this request starts looks again only if anything was stored since.
    /// `fetchKey`: the request's fetch key (``FetchJobKey``), made once per request by the caller.
    func subscribeDelivery(
        _ request: ResolvedRequest, memoryMiss: MemoryMiss?, progress: JobProgressHandler?,
        fetchKey: HashedKey<FetchJobKey>,
        completion: @escaping DeliverJob.Completion
    ) -> (job: DeliverJob, id: Int)? {
        let context = StageContext(request, memoryMiss: memoryMiss, reportsProgress: progress != nil, fetchKey: fetchKey)
        let jobKey = DeliverJobKey(request, fetch: context.fetchKey, framesOnDemand: context.framesOnDemand)
        return deliverJobs.subscribe(HashedKey(jobKey), priority: context.options.downloadPriority, progress: progress, completion: completion) {
            job in deliver(job, context)
        }
    }

    /// The last stage's work: fetch, process, store.
    private func deliver(_ job: DeliverJob, _ context: StageContext) {
        // A request that missed the memory cache just before an earlier job stored the image
        // (and left the registry) must not download again.
        let request = context.request
        if context.options.cachePolicy.readsCache,
            let image = request.cache.memoryStorage.value(forKey: request.computedKey, ifStoredSince: context.memoryMiss)
        {
            return job.finish(.success(DeliveredImage(image: image, data: nil, cacheType: .memory)))
        }
        // The fetch runs at the highest download priority of the requests sharing it: this
        // delivery's is the highest of its own requests' (a change reaches the fetch through the
        // delivery's step, and the fetch's download through the fetch's).
        let subscribedAt = job.priority
        let subscription = fetchJobs.subscribe(
            context.fetchKey, priority: subscribedAt,
            progress: context.reportsProgress ? job.reportProgress : nil,
            completion: { result in
                switch result {
                case .failure(let error): job.finish(.failure(error))
                case .success(let fetched): self.process(fetched, for: job, context)
                }
            },
            work: { fetch in self.fetch(fetch, context, request.step(after: .share)) })
        if let (fetch, id) = subscription { job.setStep(.subscription(fetch, id: id), madeAt: subscribedAt) }
    }

    /// Runs the processors over the fetched original (sharing every prefix), then stores; or, for
    /// an animation asked for with ``RequestOption/animationFramesOnDemand(_:)``, delivers its first
    /// frame and its frame decoder (``deliverFramesOnDemand(_:fetched:for:_:)``).
    private func process(_ fetched: FetchedSource, for job: DeliverJob, _ context: StageContext) {
        if fetched.image == nil, let data = fetched.data, context.framesOnDemand,
            ImageFormat(sniffing: data)?.supportsAnimation == true
        {
            return deliverFramesOnDemand(data, fetched: fetched, for: job, context)
        }
        processWhole(fetched, for: job, context)
    }

    /// ``process(_:for:_:)`` with every frame decoded.
    func processWhole(_ fetched: FetchedSource, for job: DeliverJob, _ context: StageContext) {
        let processors = Self.stages(of: context.options.processor)
        guard !processors.isEmpty else {
            return original(fetched, context) { result in
                switch result {
                case .failure(let error): job.finish(.failure(error))
                case .success(let original): self.store(original, fetched: fetched, for: job, context)
                }
            }
        }
        let subscription = subscribeProcessing(
            processors, count: processors.count, source: fetched, context,
            progress: context.reportsProgress ? job.reportProgress : nil
        ) { result in
            switch result {
            case .failure(let error): job.finish(.failure(error))
            case .success(let processed): self.store(processed, fetched: fetched, for: job, context)
            }
        }
        if let (stage, id) = subscription { job.setStep(.subscription(stage, id: id)) }
    }

    /// Subscribes to the stage that makes the image after the first `count` processors (at least
    /// one), sharing every shorter prefix with other requests. The first step is folded into the
    /// decode when it shrinks the source (``DecodePlan``).
    private func subscribeProcessing(
        _ processors: [any ImageProcessing], count: Int, source: FetchedSource, _ context: StageContext,
        progress: JobProgressHandler?,
        completion: @escaping ProcessJob.Completion
    ) -> (job: ProcessJob, id: Int)? {
        let prefix = processors.prefix(count).map(\.identifier).joined(separator: ",")
        return processJobs.subscribe(
            HashedKey(ProcessJobKey(fetch: context.fetchKey, processors: prefix)), progress: progress, completion: completion
        ) { job in
            let run = self.applying(processors[count - 1], context, to: job)
            guard count > 1 else {
                if source.image == nil, let plan = DecodePlan(processors: processors, decoding: context.options.decodingOptions) {
                    return self.decoded(source, plan: plan, context) { result in
                        if case .success(let decoded) = result, decoded.decoded?.shrunkOnLoad == true { return job.finish(result) }
                        run(result)
                    }
                }
                return self.original(source, context, completion: run)
            }
            let previous = self.subscribeProcessing(
                processors, count: count - 1, source: source, context,
                progress: context.reportsProgress ? job.reportProgress : nil, completion: run)
            if let (stage, id) = previous { job.setStep(.subscription(stage, id: id)) }
        }
    }

    /// The original image: the memory cache's, or the bytes decoded in full.
    private func original(_ source: FetchedSource, _ context: StageContext, completion: @escaping ProcessJob.Completion) {
        if let image = source.image { return completion(.success(ProcessedImage(image: image))) }
        decoded(source, plan: nil, context, completion: completion)
    }

    /// The bytes decoded with `plan` (`nil`: in full), once for every request that fetched them.
    private func decoded(
        _ source: FetchedSource, plan: DecodePlan?, _ context: StageContext,
        completion: @escaping ProcessJob.Completion
    ) {
        guard let data = source.data else {
            return completion(.failure(.pipeline(.imageNotExisting(key: context.key))))
        }
        // One request fetched the bytes: nobody to share the decode with.
        guard let decodes = source.decodes else { return decode(data, plan: plan, context, completion: completion) }
        // Not left when a request leaves: a decode under way finishes for the requests to come.
        _ = decodes.subscribe(plan, progress: nil, completion: completion) { job in
            self.decode(data, plan: plan, context) { job.finish($0) }
        }
    }

    /// A completion that runs `processor` over its input on the processing queue and finishes `job`.
    private func applying(
        _ processor: any ImageProcessing, _ context: StageContext,
        to job: ProcessJob
    ) -> @Sendable (Result<ProcessedImage, OspreyError>) -> Void {
        let place = processingPlace(context)
        let logger = configuration.logger, key = context.key
        return { input in
            switch input {
            case .failure(let error): job.finish(.failure(error))
            case .success(let input):
                ProcessingThread.run(on: place) {
                    logger.debug("process", metadata: ["osprey.key": "\(key)", "osprey.processor": "\(processor.identifier)"])
                    job.finish(Result { () throws(OspreyError) in ProcessedImage(image: try processor.process(input.image), decoded: input.decoded) })
                }
            }
        }
    }

    /// The fetch stage's work from `step` on (``ResolvedRequest/step(after:)``): the original image from the
    /// original cache's memory, its bytes from the original cache's disk, or loaded.
    private func fetch(_ job: FetchJob, _ context: StageContext, _ step: RetrieveStep) {
        let request = context.request, key = context.key
        switch step {
        case .originalMemory:
            if let image = context.originalCache.memoryStorage.value(forKey: key) {
                configuration.logger.debug("original from memory", metadata: ["osprey.key": "\(key)"])
                return job.finishFetch(.success(FetchedSource(image: image, data: nil, cacheType: .memory, validator: nil)))
            }
            fetch(job, context, request.step(after: .originalMemory))
        case .originalDisk:
            // The lookup may start the download, a step of its own, recorded after this one.
            job.setStep(
                .startingTask {
                    // Bytes that are not an image (a foreign file) are a miss; they are decoded
                    // later, by the stage that knows the size each request needs.
                    let stored = await context.originalCache.diskStorage.value(
                        forKey: key, servingExpired: self.servesExpired(context.source))
                    if let data = stored, ImageFormat(sniffing: data) != nil {
                        self.configuration.logger.debug("original from disk", metadata: ["osprey.key": "\(key)", "osprey.bytes": "\(data.count)"])
                        return job.finishFetch(.success(FetchedSource(image: nil, data: data, cacheType: .disk, validator: nil)))
                    }
                    if !Task.isCancelled { self.fetch(job, context, request.step(after: .originalDisk)) }
                })
        case .load:
            load(job, context)
        case .fail, .memory, .disk, .share:
            job.finish(.failure(.pipeline(.imageNotExisting(key: request.computedKey))))
        }
    }

    /// Downloads (or reads the provider of) the source. With
    /// ``OriginalStorage/disk`` the bytes are written to the original cache before the
    /// job finishes: a request for another size that comes after the job has left the registry then
    /// finds them on disk instead of downloading them again.
    private func load(_ job: FetchJob, _ context: StageContext) {
        let storesOriginal = context.fetchKey.key.storesOriginal
        let logger = configuration.logger
        logger.debug("download start", metadata: ["osprey.key": "\(context.key)", "osprey.source": "\(context.source)"])
        let decoded: @Sendable (Result<DownloadResult, OspreyError>) -> Void = { result in
            switch result {
            case .success(let download):
                logger.debug(
                    "download end",
                    metadata: [
                        "osprey.key": "\(context.key)", "osprey.status": "\(download.response.statusCode)",
                        "osprey.bytes": "\(download.data.count)"
                    ])
            case .failure(let error):
                logger.debug("download failed", metadata: ["osprey.key": "\(context.key)", "osprey.error": "\(error)"])
                return job.finishFetch(.failure(self.offlineMapped(error, context.source)))
            }
            guard storesOriginal, case .success(let download) = result else {
                return job.finishFetch(result.map { FetchedSource(image: nil, data: $0.data, cacheType: .none, validator: $0.response.validator) })
            }
            // The write runs on the processing queue, where the decode the job's completion
            // starts then runs in place: one hand-off from the download's thread.
            let fetched = FetchedSource(image: nil, data: download.data, cacheType: .none, validator: download.response.validator)
            ProcessingThread.run(on: self.processingPlace(context)) {
                context.originalCache.storeToDisk(download.data, forKey: context.key, validator: download.response.validator) { _ in
                    job.finishFetch(.success(fetched))
                }
            }
        }
        var options = context.options.downloadOptions()
        var completion = decoded
        // Progressive previews, when a request listens for them (ImagePipeline+Previews.swift).
        let fetchKey = context.fetchKey
        if case .network = context.source, options.responseDataModifier == nil, let previewer = previews.download(for: fetchKey) {
            options.bodyObserver = { body, expected in previewer.receive(body, expected: expected) }
            completion = { result in
                self.previews.downloadEnded(fetchKey, previewer)
                decoded(result)
            }
        }
        let step = load(
            context.source, downloader: context.request.downloader, options: options,
            progress: context.reportsProgress ? job.reportProgress : nil, completion: completion)
        job.setStep(step, madeAt: options.priority)
    }

    /// Decodes the fetched bytes (in full, or with `plan` folded in) on the processing queue and
    /// calls `completion` there.
    private func decode(_ data: Data, plan: DecodePlan?, _ context: StageContext, completion: @escaping ProcessJob.Completion) {
        let decoder = configuration.decoder, options = context.options.decodingOptions
        let logger = configuration.logger, key = context.key
        let decode: @Sendable () -> Void = {
            completion(
                Result { () throws(OspreyError) in
                    let (image, folded) = try decoder.decode(data, options: options, plan: plan)
                    logger.debug(
                        "decode",
                        metadata: [
                            "osprey.key": "\(key)", "osprey.bytes": "\(data.count)",
                            "osprey.size": "\(image.width)x\(image.height)", "osprey.shrunkOnLoad": "\(folded)"
                        ])
                    return ProcessedImage(image: image, decoded: DecodeInfo(width: image.width, height: image.height, shrunkOnLoad: folded))
                })
        }
        ProcessingThread.run(on: processingPlace(context), decode)
    }

    /// Where `context`'s decoding, processing and cache writes run: the options' queue, else the pipeline's.
    func processingPlace(_ context: StageContext) -> ProcessingPlace {
        // The one field, read in place: passing `context.options` on copied the whole options.
        context.options.processingQueue.map { ProcessingPlace.queue($0) } ?? defaultPlace
    }

    /// Where work for a request with `options` runs: its ``RequestOption/processingQueue(_:)``, else
    /// the pipeline's own place (``defaultPlace``).
    func processingPlace(_ options: ResolvedOptions) -> ProcessingPlace {
        options.processingQueue.map { ProcessingPlace.queue($0) } ?? defaultPlace
    }

    // MARK: - Helpers

    /// A processor split into its stages (a composition's parts).
    static func stages(of processor: any ImageProcessing) -> [any ImageProcessing] {
        if let composition = processor as? ImageProcessors.Composition { return composition.processors }
        return processor.identifier.isEmpty ? [] : [processor]
    }
}
