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

extension ImagePipeline {
    /// Steps 1-5 of the retrieve flow for `source`, then its alternative sources in order.
    /// (Runs on the global concurrent executor, whoever the caller is.)
    @concurrent
    func retrieve(_ source: ImageSource, options: OspreyOptions,
                  progress: SharedJob<DeliveredImage>.ProgressHandler?,
                  refresh: (@Sendable (ImageResult?) -> Void)?) async throws(OspreyError) -> ImageResult {
        let candidates = [source] + options.alternativeSources
        var failures: [OspreyError] = []
        for (index, candidate) in candidates.enumerated() {
            do throws(OspreyError) {
                var result = try await retrieveOne(candidate, options: options, progress: progress, refresh: refresh)
                if index > 0 { result.originalSource = source }
                return result
            } catch {
                if error.isCancellation || Task.isCancelled { throw OspreyError.pipeline(.cancelled(source: source.description)) }
                failures.append(error)
            }
        }
        if failures.count == 1 { throw failures[0] }
        throw OspreyError.pipeline(.allSourcesFailed(sources: candidates.map(\.description), errors: failures))
    }

    private func retrieveOne(_ source: ImageSource, options: OspreyOptions,
                             progress: SharedJob<DeliveredImage>.ProgressHandler?,
                             refresh: (@Sendable (ImageResult?) -> Void)?) async throws(OspreyError) -> ImageResult {
        let cache = options.targetCache ?? configuration.cache
        let key = cacheKey(for: source)
        let identifier = options.processor.identifier
        if !options.forceRefresh {
            let cacheOptions = options.cacheOptions
            let hit: ImageCacheResult
            if options.fromMemoryCacheOrRefresh {
                hit = cache.retrieveImageInMemoryCache(forKey: key, processorIdentifier: identifier, options: cacheOptions)
                    .map(ImageCacheResult.memory) ?? .none
            } else {
                // A disk entry that cannot be read counts as a miss (the cache removes it).
                hit = (try? await cache.retrieveImage(forKey: key, processorIdentifier: identifier, options: cacheOptions)) ?? .none
            }
            if let image = hit.image {
                let result = ImageResult(image: options.imageModifier?(image) ?? image, cacheType: hit.cacheType, source: source)
                if options.refreshCached, case .network = source {
                    startRevalidation(source, key: key, options: options, refresh: refresh)
                } else {
                    refresh?(nil)
                }
                return result
            }
        }
        let delivered = try await Self.await(deliverJob(source, key: key, options: options), progress: progress)
        refresh?(nil)
        return ImageResult(image: options.imageModifier?(delivered.image) ?? delivered.image, cacheType: delivered.cacheType,
                           source: source, data: options.returnsData ? delivered.data : nil)
    }

    // MARK: - Stages

    /// The last stage: the processed image, stored in the target cache once for all its requests.
    func deliverJob(_ source: ImageSource, key: String, options: OspreyOptions) -> SharedJob<DeliveredImage> {
        let processors = Self.stages(of: options.processor)
        let fetchKey = fetchJobKey(source, key: key, options: options)
        let cache = options.targetCache ?? configuration.cache
        let originalCache = options.originalCache ?? cache
        let jobKey = "\(fetchKey)|p:\(options.processor.identifier)|c:\(ObjectIdentifier(cache).hashValue):\(options.cacheMemoryOnly):\(options.waitForCache):\(options.cacheOriginalImage):\(ObjectIdentifier(originalCache).hashValue)"
        return deliverJobs.job(for: jobKey) { job throws(OspreyError) in
            // A request that missed the memory cache just before an earlier job stored the image
            // (and left the registry) must not download again.
            if !options.forceRefresh,
               let image = cache.memoryStorage.value(forKey: ImageCache.computedKey(key, processorIdentifier: options.processor.identifier)) {
                return DeliveredImage(image: image, data: nil, cacheType: .memory)
            }
            let fetch = self.fetchJob(source, key: key, jobKey: fetchKey, options: options)
            let fetched = try await Self.await(fetch, progress: job.reportProgress)
            let image = processors.isEmpty ? fetched.image
                : try await Self.await(self.processJob(processors, count: processors.count, fetch: fetch, fetchKey: fetchKey, options: options), progress: job.reportProgress)
            await self.store(image, fetched: fetched, key: key, cache: cache, originalCache: originalCache, options: options)
            return DeliveredImage(image: image, data: fetched.data, cacheType: fetched.cacheType)
        }
    }

    /// The stage running the first `count` processors, sharing every shorter prefix.
    private func processJob(_ processors: [any ImageProcessing], count: Int, fetch: SharedJob<FetchedOriginal>,
                            fetchKey: String, options: OspreyOptions) -> SharedJob<Image> {
        let prefix = processors.prefix(count).map(\.identifier).joined(separator: ",")
        let queue = options.processingQueue ?? configuration.processingQueue
        return processJobs.job(for: "\(fetchKey)|p:\(prefix)") { job throws(OspreyError) in
            let input: Image
            if count == 1 {
                input = try await Self.await(fetch, progress: job.reportProgress).image
            } else {
                let previous = self.processJob(processors, count: count - 1, fetch: fetch, fetchKey: fetchKey, options: options)
                input = try await Self.await(previous, progress: job.reportProgress)
            }
            let processor = processors[count - 1]
            return try await Self.run(on: queue) { () throws(OspreyError) in try processor.process(input) }
        }
    }

    /// The fetch stage: the original image, from the original cache (when a processor is set) or
    /// loaded and decoded.
    private func fetchJob(_ source: ImageSource, key: String, jobKey: String, options: OspreyOptions) -> SharedJob<FetchedOriginal> {
        fetchJobs.job(for: jobKey) { job throws(OspreyError) in
            let cache = options.targetCache ?? self.configuration.cache
            let originalCache = options.originalCache ?? cache
            let queue = options.processingQueue ?? self.configuration.processingQueue
            let decoder = self.configuration.decoder
            let decoding = options.decodingOptions
            // Shared by every processor: the original may already be cached (step 3 of the flow).
            if !options.forceRefresh {
                if let image = originalCache.memoryStorage.value(forKey: key) {
                    return FetchedOriginal(image: image, data: nil, cacheType: .memory, validator: nil)
                }
                if !options.fromMemoryCacheOrRefresh, let data = await originalCache.diskStorage.value(forKey: key) {
                    if let image = try? await Self.run(on: queue, { () throws(OspreyError) in try decoder.decode(data, options: decoding) }) {
                        return FetchedOriginal(image: image, data: data, cacheType: .disk, validator: nil)
                    }
                }
            }
            if options.onlyFromCache {
                throw OspreyError.pipeline(.imageNotExisting(key: ImageCache.computedKey(key, processorIdentifier: options.processor.identifier)))
            }
            let download = try await self.load(source, options: options, validator: nil, progress: job.reportProgress)
            self.decodeCount.add(1, ordering: .relaxed)
            let image = decoder.isAsynchronous
                ? try await Self.run(on: queue) { () throws(OspreyError) in try decoder.decode(download.data, options: decoding) }
                : try decoder.decode(download.data, options: decoding)
            return FetchedOriginal(image: image, data: download.data, cacheType: .none, validator: download.response.validator)
        }
    }

    /// Downloads a network source or reads a provider.
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

    /// Stores the processed image (and, when asked, the original bytes and the validators), with
    /// `CacheCallbackCoordinator`'s timing: memory at once; disk awaited with
    /// ``OspreyOptions/waitForCache``, else in the background.
    private func store(_ image: Image, fetched: FetchedOriginal, key: String, cache: ImageCache, originalCache: ImageCache,
                       options: OspreyOptions) async {
        let identifier = options.processor.identifier
        let cacheOptions = options.cacheOptions
        let toDisk = !options.cacheMemoryOnly
        // An unprocessed image read from the target cache itself needs no new write.
        let needsStore = !(identifier.isEmpty && fetched.cacheType != .none && originalCache === cache)
        let storeOriginal = options.cacheOriginalImage && !identifier.isEmpty && fetched.cacheType == .none && toDisk
        let validator = fetched.cacheType == .none && toDisk ? fetched.validator : nil
        let original = identifier.isEmpty ? fetched.data : nil
        if options.waitForCache {
            if needsStore {
                await cache.store(image, original: original, forKey: key, processorIdentifier: identifier, options: cacheOptions, toDisk: toDisk)
            }
            await writeExtras(storeOriginal ? fetched.data : nil, validator: validator, key: key, cache: cache, originalCache: originalCache)
            return
        }
        if needsStore {
            cache.store(image, original: original, forKey: key, processorIdentifier: identifier, options: cacheOptions, toDisk: toDisk, completion: nil)
        }
        if storeOriginal || validator != nil {
            let originalData = storeOriginal ? fetched.data : nil
            Task.detached { await self.writeExtras(originalData, validator: validator, key: key, cache: cache, originalCache: originalCache) }
        }
    }

    private func writeExtras(_ originalData: Data?, validator: CacheValidator?, key: String, cache: ImageCache, originalCache: ImageCache) async {
        if let originalData {
            _ = try? await originalCache.storeToDisk(originalData, forKey: key)
        }
        if let validator {
            await storeValidator(validator, key: key, cache: cache)
        }
    }

    // MARK: - Helpers

    /// A processor split into its stages (a composition's parts).
    static func stages(of processor: any ImageProcessing) -> [any ImageProcessing] {
        if let composition = processor as? ImageProcessors.Composition { return composition.processors }
        return processor.identifier.isEmpty ? [] : [processor]
    }

    /// The key under which fetch work is shared: everything that changes the original image.
    private func fetchJobKey(_ source: ImageSource, key: String, options: OspreyOptions) -> String {
        let downloader = options.downloader ?? configuration.downloader
        let originalCache = options.originalCache ?? options.targetCache ?? configuration.cache
        var parts = ["\(ObjectIdentifier(downloader).hashValue)", "\(ObjectIdentifier(originalCache).hashValue)",
                     key, source.url?.absoluteString ?? "provider", options.decodingOptions.workKey,
                     "\(options.forceRefresh)\(options.onlyFromCache)\(options.fromMemoryCacheOrRefresh)"]
        if !options.requestHeaders.isEmpty { parts.append("\(options.requestHeaders.sorted { $0.key < $1.key })") }
        if let credentials = options.credentials { parts.append(credentials.user) }
        // Closures cannot be compared: requests with modifiers share nothing.
        if options.requestModifier != nil || options.responseDataModifier != nil || options.redirectHandler != nil || options.retryStrategy != nil {
            parts.append(UUID().uuidString)
        }
        return parts.joined(separator: "|")
    }

    /// Waits for a job, mapping its errors to ``OspreyError``.
    static func await<T>(_ job: SharedJob<T>, progress: SharedJob<T>.ProgressHandler? = nil) async throws(OspreyError) -> T {
        do {
            return try await job.value(progress: progress)
        } catch {
            throw OspreyError.wrapping(error, source: nil)
        }
    }

    /// Runs CPU-bound work on a dispatch queue, off the Swift concurrency pool.
    static func run<T: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws(OspreyError) -> T) async throws(OspreyError) -> T {
        let result: Result<T, OspreyError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(OspreyError) in try work() }) }
        }
        return try result.get()
    }
}
