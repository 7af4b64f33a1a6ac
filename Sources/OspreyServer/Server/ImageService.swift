import Foundation
import Logging
import Osprey

/// The one processing path behind both grammars: result cache → source guard → coalescing →
/// worker slot → ``ImagePipeline`` (original cache, shared download, decode, processors) →
/// format choice → encode → result cache.
final class ImageService: Sendable {
    let configuration: ServerConfiguration
    let pipeline: ImagePipeline
    let loader: DataLoader
    let results: ResultCache
    let limiter: WorkLimiter
    let sourceGuard: SourceGuard
    let metrics: ServerMetrics
    let negotiator = FormatNegotiator()
    let coalescer = Coalescer<ResultCache.Entry>()
    let policies = OriginPolicies()
    private let logger: Logger

    init(configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        sourceGuard = SourceGuard(allowLoopback: configuration.allowLoopbackSources, allowedSources: configuration.allowedSources)
        limiter = WorkLimiter(workers: configuration.workers, queueLimit: configuration.queue)
        results = ResultCache(memoryBytes: configuration.memoryCacheBytes, directory: configuration.cacheDirectory,
                              diskBytes: configuration.diskCacheBytes, lifetime: TimeInterval(configuration.originTTL))
        loader = DataLoader()
        var download = ImageDownloader.Configuration()
        download.maximumResponseSize = configuration.maxSourceBytes
        download.timeout = configuration.downloadTimeout
        download.blacklistsFailedURLs = false
        download.allowsResumableDownloads = false
        download.maximumConcurrentDownloads = max(6, configuration.workers * 2)
        let downloader = ImageDownloader(configuration: download,
                                         loader: MeteredLoader(base: GuardedLoader(base: loader, sourceGuard: sourceGuard),
                                                                              metrics: metrics, policies: policies))
        let memory = MemoryStorage.Config(totalCostLimit: configuration.memoryCacheBytes, expiration: .seconds(TimeInterval(configuration.originTTL)))
        let disk = DiskStorage.Config(name: "originals",
                                      directory: (configuration.cacheDirectory ?? FileManager.default.temporaryDirectory
                                          .appendingPathComponent("osprey-serve-\(UUID().uuidString)")).appendingPathComponent("originals"),
                                      sizeLimit: configuration.diskCacheBytes,
                                      expiration: .seconds(TimeInterval(configuration.originTTL)))
        let cache = ImageCache(name: "osprey-serve", memoryConfig: memory, diskConfig: disk)
        var options = OspreyOptions()
        options.decodingOptions = DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)
        options.cacheOriginalImage = true
        options.diskCacheExpiration = .seconds(TimeInterval(configuration.originTTL))
        options.memoryCacheExpiration = .seconds(TimeInterval(configuration.originTTL))
        // Reads do not extend an entry: after the origin TTL the source is fetched again.
        options.memoryCacheAccessExtendingExpiration = .none
        options.diskCacheAccessExtendingExpiration = .none
        pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: downloader, defaultOptions: options))
    }

    /// The result-cache key of `job` for a request with `accept`.
    private func key(for job: ImageJob, offer: FormatNegotiator.Offer) -> String {
        let quality = job.quality ?? configuration.quality
        return job.format.map { job.resultKey(format: $0, quality: quality) }
            ?? "\(job.source.absoluteString)|\(job.processingIdentifier)|auto:\(offer.key):\(quality)|\(job.maxBytes ?? 0)"
    }

    /// The cached result for `job`, if any (the fast path: no worker, no cancellation watch).
    func cachedResult(for job: ImageJob, accept: String?) async throws(ServerError) -> ResultCache.Entry? {
        guard sourceGuard.isAllowListed(job.source) else {
            throw .forbidden("source \(job.source.absoluteString) is not in the allowed sources")
        }
        guard let (entry, level) = await results.lookup(key(for: job, offer: negotiator.offer(accept: accept))) else { return nil }
        metrics.cache(level)
        return entry
    }

    /// The encoded result for `job`, negotiating the format from `accept` when the job names none.
    /// Cancelling the calling task (the client went away) leaves the job, which is cancelled when
    /// no other request shares it.
    func respond(to job: ImageJob, accept: String?) async throws(ServerError) -> ResultCache.Entry {
        if let entry = try await cachedResult(for: job, accept: accept) { return entry }
        let quality = job.quality ?? configuration.quality
        let offer = negotiator.offer(accept: accept)
        let key = key(for: job, offer: offer)
        let (entry, shared) = try await coalescer.value(for: key) { [self] () async throws(ServerError) in
            try await produce(job, quality: quality, offer: offer, key: key)
        }
        if shared { metrics.coalesced.increment() }
        return entry
    }

    private func produce(_ job: ImageJob, quality: Int, offer: FormatNegotiator.Offer, key: String) async throws(ServerError) -> ResultCache.Entry {
        try await sourceGuard.check(job.source)
        let enqueued = ContinuousClock.now
        metrics.queued.increment()
        // A job refused (429) or cancelled while waiting never reaches the body: leave the gauge then too.
        var waiting = true
        defer { if waiting { metrics.queued.decrement() } }
        return try await limiter.run { [self] () async throws(ServerError) in
            waiting = false
            metrics.queued.decrement()
            metrics.record("queue", ContinuousClock.now - enqueued)
            let fetchStart = ContinuousClock.now
            var processors = job.processors
            for watermark in job.watermarks.reversed() {
                try await sourceGuard.check(watermark.url)
                let mark: ImageResult
                do throws(OspreyError) {
                    mark = try await pipeline.image(for: watermark.url)
                } catch {
                    var failure = ServerError(error)
                    failure.reason = "watermark: " + failure.reason
                    throw failure
                }
                processors.insert(watermark.processor(mark: mark.image), at: min(watermark.index, processors.count))
            }
            let processor: any ImageProcessing = processors.isEmpty ? ImageProcessors.Identity() : ImageProcessors.Composition(processors)
            let result: ImageResult
            do throws(OspreyError) {
                result = try await pipeline.image(for: job.source, options: [.processor(processor)])
            } catch {
                throw ServerError(error)
            }
            metrics.record("fetch", ContinuousClock.now - fetchStart)
            metrics.cache(result.cacheType == .memory ? "pipeline_memory" : result.cacheType == .disk ? "pipeline_disk" : "miss")
            let image = result.image
            guard image.frameCount <= configuration.maxAnimationFrames else {
                throw .unprocessable("source has \(image.frameCount) animation frames, more than the limit of \(configuration.maxAnimationFrames)")
            }
            guard image.width <= configuration.maxResultDimension, image.height <= configuration.maxResultDimension else {
                throw .unprocessable("result would be \(image.width)x\(image.height), larger than the limit of \(configuration.maxResultDimension) per side")
            }
            let encodeStart = ContinuousClock.now
            let format = job.format ?? negotiator.format(for: image, offer: offer)
            let data = try encode(image, as: format, quality: quality, maxBytes: job.maxBytes)
            metrics.record("encode", ContinuousClock.now - encodeStart)
            var entry = ResultCache.Entry(data: data, format: format)
            if configuration.respectOriginCacheControl, let policy = policies.policy(for: job.source) {
                entry.policy = policy
            }
            if !entry.policy.noStore {
                let lifetime = min(configuration.originTTL, entry.policy.maxAge ?? .max)
                await results.store(entry, forKey: key, lifetime: TimeInterval(lifetime))
            }
            return entry
        }
    }

    /// Encodes, lowering the quality step by step while the result is over `maxBytes`.
    private func encode(_ image: Image, as format: ImageFormat, quality: Int, maxBytes: Int?) throws(ServerError) -> Data {
        var quality = quality
        while true {
            let data: Data
            do throws(OspreyError) {
                data = try image.encoded(as: format, quality: quality)
            } catch {
                throw ServerError(error)
            }
            guard let maxBytes, data.count > maxBytes, format != .png, format != .gif, quality > 10 else { return data }
            quality = max(10, quality - 10)
        }
    }

    /// Shuts the HTTP client down.
    func shutdown() async {
        try? await loader.shutdown()
    }
}

/// Counts origin fetches and the bytes they bring, and records each source's `Cache-Control`.
struct MeteredLoader: DataLoading {
    let base: any DataLoading
    let metrics: ServerMetrics
    let policies: OriginPolicies

    func send(_ request: DownloadRequest) async throws -> DataLoadingResponse {
        var answer = try await base.send(request)
        metrics.originFetches.increment()
        if (200..<300).contains(answer.response.statusCode) {
            policies.record(OriginPolicy(cacheControl: answer.response.value(forHTTPHeaderField: "Cache-Control")), for: request.url)
        }
        let metrics = self.metrics
        answer.body = DataChunks(answer.body) { chunk in
            metrics.bytesIn.increment(by: Int64(chunk.count))
            return chunk
        }
        return answer
    }
}
