import Foundation

/// The original image of a source, as the fetch stage produced it.
struct FetchedOriginal: Sendable {
    var image: Image
    /// The original bytes, when they were read or downloaded.
    var data: Data?
    /// Where the bytes came from: ``CacheType/none`` when loaded, else the original cache's level.
    var cacheType: CacheType
    /// The validators of the response, for ``OspreyOptions/refreshCached``.
    var validator: CacheValidator?
}

/// What the last stage hands to each request.
struct DeliveredImage: Sendable {
    var image: Image
    var data: Data?
    var cacheType: CacheType
}

/// The stages of a miss, each a ``SharedJob`` in a registry of the pipeline: fetch (the original,
/// from the original cache or loaded and decoded), process (one per processor prefix), deliver
/// (the processed image, stored in the target cache once for all its requests).
/// What every stage of one piece of work needs, allocated once and shared by the stages'
/// closures (copying ``OspreyOptions`` into each would retain each of its references again).
final class StageContext: Sendable {
    let source: ImageSource
    /// The source's cache key.
    let key: String
    /// The options of the request that started the work (shared with it, not copied).
    let sharedOptions: SharedOptions
    var options: OspreyOptions { _read { yield sharedOptions.value } }
    let fetchKey: HashedKey<FetchJobKey>
    let cache: ImageCache
    let originalCache: ImageCache
    /// Whether download progress is relayed: only when the request starting the work has a
    /// progress handler (reporting it costs the downloader a lock per chunk).
    let reportsProgress: Bool

    init(source: ImageSource, key: String, options shared: SharedOptions, pipeline: ImagePipeline, reportsProgress: Bool) {
        self.source = source
        self.key = key
        sharedOptions = shared
        cache = shared.value.targetCache ?? pipeline.configuration.cache
        originalCache = shared.value.originalCache ?? cache
        fetchKey = HashedKey(FetchJobKey(source: source, key: key, options: shared.value, downloader: shared.value.downloader ?? pipeline.configuration.downloader,
                                         originalCache: originalCache))
        self.reportsProgress = reportsProgress
    }
}

extension ImagePipeline {
    /// Subscribes to the last stage for `source`, starting it (and the stages it needs) when no
    /// request shares it. Returns the subscription, or `nil` when `completion` was already called.
    /// `memoryMissedAt`: the request missed the target memory cache when its write count was this
    /// (`nil`: it did not look); a stage this request starts looks again only if anything was
    /// stored since.
    func subscribeDelivery(_ source: ImageSource, key: String, options shared: SharedOptions, memoryMissedAt: UInt64?,
                           progress: JobProgressHandler?,
                           completion: @escaping DeliverJob.Completion) -> (job: DeliverJob, id: Int)? {
        let context = StageContext(source: source, key: key, options: shared, pipeline: self, reportsProgress: progress != nil)
        let jobKey = DeliverJobKey(fetch: context.fetchKey, processor: shared.value.processor.identifier, cache: ObjectIdentifier(context.cache),
                                   originalCache: ObjectIdentifier(context.originalCache), memoryOnly: shared.value.cacheMemoryOnly,
                                   waitForCache: shared.value.waitForCache, cacheOriginal: shared.value.cacheOriginalImage)
        return deliverJobs.subscribe(HashedKey(jobKey), progress: progress, completion: completion) { job in
            deliver(job, context, memoryMissedAt: memoryMissedAt)
        }
    }

    /// The last stage's work: fetch, process, store.
    private func deliver(_ job: DeliverJob, _ context: StageContext, memoryMissedAt: UInt64?) {
        // A request that missed the memory cache just before an earlier job stored the image
        // (and left the registry) must not download again. Nothing stored since its miss: the
        // miss still holds.
        let memory = context.cache.memoryStorage
        if !context.options.forceRefresh, memoryMissedAt != memory.writeCount,
           let image = memory.value(forKey: ImageCache.computedKey(context.key, processorIdentifier: context.options.processor.identifier)) {
            return job.finish(.success(DeliveredImage(image: image, data: nil, cacheType: .memory)))
        }
        let subscription = fetchJobs.subscribe(context.fetchKey, progress: context.reportsProgress ? job.reportProgress : nil, completion: { result in
            switch result {
            case .failure(let error): job.finish(.failure(error))
            case .success(let fetched): self.process(fetched, for: job, context)
            }
        }, work: { fetch in
            // Unprocessed, from the same cache: the original's memory entry is the one just missed.
            let sameEntry = context.options.processor.identifier.isEmpty && context.originalCache === context.cache
            self.fetch(fetch, context, memoryMissed: sameEntry)
        })
        if let (fetch, id) = subscription { job.setStep(.subscription(fetch, id: id)) }
    }

    /// Runs the processors over the fetched original (sharing every prefix), then stores.
    private func process(_ fetched: FetchedOriginal, for job: DeliverJob, _ context: StageContext) {
        let processors = Self.stages(of: context.options.processor)
        guard !processors.isEmpty else { return store(fetched.image, fetched: fetched, for: job, context) }
        let subscription = subscribeProcessing(processors, count: processors.count, original: fetched, context,
                                               progress: job.reportProgress) { result in
            switch result {
            case .failure(let error): job.finish(.failure(error))
            case .success(let image): self.store(image, fetched: fetched, for: job, context)
            }
        }
        if let (stage, id) = subscription { job.setStep(.subscription(stage, id: id)) }
    }

    /// Subscribes to the stage running the first `count` processors over `original`, sharing every
    /// shorter prefix with other requests.
    private func subscribeProcessing(_ processors: [any ImageProcessing], count: Int, original: FetchedOriginal, _ context: StageContext,
                                     progress: JobProgressHandler?,
                                     completion: @escaping ProcessJob.Completion) -> (job: ProcessJob, id: Int)? {
        let prefix = processors.prefix(count).map(\.identifier).joined(separator: ",")
        let queue = context.options.processingQueue ?? configuration.processingQueue
        return processJobs.subscribe(HashedKey(ProcessJobKey(fetch: context.fetchKey, processors: prefix)), progress: progress, completion: completion) { job in
            let processor = processors[count - 1]
            let run: @Sendable (Result<Image, OspreyError>) -> Void = { input in
                switch input {
                case .failure(let error): job.finish(.failure(error))
                case .success(let image): queue.async { job.finish(Result { () throws(OspreyError) in try processor.process(image) }) }
                }
            }
            guard count > 1 else { return run(.success(original.image)) }
            let previous = self.subscribeProcessing(processors, count: count - 1, original: original, context,
                                                    progress: job.reportProgress, completion: run)
            if let (stage, id) = previous { job.setStep(.subscription(stage, id: id)) }
        }
    }

    /// The fetch stage's work: the original image, from the original cache (when a processor is
    /// set) or loaded and decoded. `memoryMissed`: the original cache's memory entry was looked
    /// up and missed just before (by the deliver stage starting this one).
    private func fetch(_ job: FetchJob, _ context: StageContext, memoryMissed: Bool) {
        // Shared by every processor: the original may already be cached (step 3 of the flow).
        if !context.options.forceRefresh {
            if !memoryMissed, let image = context.originalCache.memoryStorage.value(forKey: context.key) {
                return job.finish(.success(FetchedOriginal(image: image, data: nil, cacheType: .memory, validator: nil)))
            }
            if !context.options.fromMemoryCacheOrRefresh {
                let queue = context.options.processingQueue ?? configuration.processingQueue
                let decoder = configuration.decoder
                let lookup = Task {
                    let decoding = context.options.decodingOptions
                    if let data = await context.originalCache.diskStorage.value(forKey: context.key),
                       let image = try? await Self.run(on: queue, { () throws(OspreyError) in try decoder.decode(data, options: decoding) }) {
                        return job.finish(.success(FetchedOriginal(image: image, data: data, cacheType: .disk, validator: nil)))
                    }
                    if !Task.isCancelled { self.load(job, context) }
                }
                return job.setStep(.task(lookup))
            }
        }
        load(job, context)
    }

    /// Downloads (or reads the provider of) the source and decodes it, unless only caches may be used.
    private func load(_ job: FetchJob, _ context: StageContext) {
        if context.options.onlyFromCache {
            let computed = ImageCache.computedKey(context.key, processorIdentifier: context.options.processor.identifier)
            return job.finish(.failure(.pipeline(.imageNotExisting(key: computed))))
        }
        let downloader = context.options.downloader ?? configuration.downloader
        let decoded: @Sendable (Result<DownloadResult, OspreyError>) -> Void = { result in
            switch result {
            case .failure(let error): job.finish(.failure(error))
            case .success(let download): self.decode(download, for: job, context)
            }
        }
        switch context.source {
        case .network(let resource):
            let download = downloader.download(resource.url, options: context.options.downloadOptions(),
                                               progress: context.reportsProgress ? job.reportProgress : nil, completion: decoded)
            job.setStep(.download(download))
        case .provider(let provider):
            let read = Task {
                do {
                    decoded(.success(try await downloader.download(provider: provider, options: context.options.downloadOptions())))
                } catch {
                    decoded(.failure(OspreyError.wrapping(error, source: context.source)))
                }
            }
            job.setStep(.task(read))
        }
    }

    private func decode(_ download: DownloadResult, for job: FetchJob, _ context: StageContext) {
        decodeCount.add(1, ordering: .relaxed)
        // A synchronous decoder runs here, with no closure to allocate.
        guard configuration.decoder.isAsynchronous else { return finishDecoding(download, for: job, context) }
        (context.options.processingQueue ?? configuration.processingQueue).async {
            self.finishDecoding(download, for: job, context)
        }
    }

    private func finishDecoding(_ download: DownloadResult, for job: FetchJob, _ context: StageContext) {
        job.finish(Result { () throws(OspreyError) in
            FetchedOriginal(image: try configuration.decoder.decode(download.data, options: context.options.decodingOptions), data: download.data,
                            cacheType: .none, validator: download.response.validator)
        })
    }

    /// Downloads a network source or reads a provider (for revalidation).
    func load(_ source: ImageSource, options: OspreyOptions, validator: CacheValidator?,
              progress: @escaping @Sendable (Int, Int?) -> Void) async throws(OspreyError) -> DownloadResult {
        let downloader = options.downloader ?? configuration.downloader
        do {
            switch source {
            case .network(let resource):
                return try await downloader.download(resource.url, options: options.downloadOptions(validator: validator), progress: progress)
            case .provider(let provider):
                return try await downloader.download(provider: provider, options: options.downloadOptions())
            }
        } catch {
            throw OspreyError.wrapping(error, source: source)
        }
    }

    // MARK: - Helpers

    /// A processor split into its stages (a composition's parts).
    static func stages(of processor: any ImageProcessing) -> [any ImageProcessing] {
        if let composition = processor as? ImageProcessors.Composition { return composition.processors }
        return processor.identifier.isEmpty ? [] : [processor]
    }

    /// Runs CPU-bound work on a dispatch queue, off the Swift concurrency pool.
    static func run<T: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws(OspreyError) -> T) async throws(OspreyError) -> T {
        let result: Result<T, OspreyError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(OspreyError) in try work() }) }
        }
        return try result.get()
    }
}
