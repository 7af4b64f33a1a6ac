import Foundation
import Logging
import Osprey

/// The one processing path behind both grammars: result cache → source guard → coalescing →
/// worker slot → ``SourceLoader`` (the source's bytes from the pipeline's data stage, revalidated
/// with the origin when stale; decode and processors through the ``ImagePipeline``) → format
/// choice → encode → result cache.
final class ImageService: Sendable {
    let configuration: ServerConfiguration
    let loader: DataLoader
    let results: ResultCache
    let limiter: WorkLimiter
    let sourceGuard: SourceGuard
    let metrics: ServerMetrics
    let negotiator = FormatNegotiator()
    /// The results being made, shared by identical requests (the library's job table).
    let jobs = JobRegistry<String, Result<ResultCache.Entry, ServerError>>()
    let policies: OriginPolicies
    /// Sources through the pipeline, validated with the origin once stale.
    let sources: SourceLoader
    /// Files under the local root and the upload directory.
    let local: LocalSource
    /// The object store's client, with ``ServerConfiguration/s3``.
    let s3: S3Client?
    /// Results shared by every instance in a bucket, with ``ServerConfiguration/resultStore``.
    let resultStore: ResultStore?
    let logger: Logger

    /// The pipeline (originals and their validators in its cache).
    var pipeline: ImagePipeline { sources.pipeline }

    init(configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger) {
        self.configuration = configuration
        self.metrics = metrics
        self.logger = logger
        policies = OriginPolicies(lifetime: .seconds(max(0, configuration.originTTL)))
        var sourceGuard = SourceGuard(
            allowLoopback: configuration.allowLoopbackSources, allowPrivate: configuration.allowPrivateSources,
            allowedSources: configuration.allowedSources)
        if configuration.upload, let uploads = configuration.uploadBucket { sourceGuard.allowedObjects = [uploads] }
        self.sourceGuard = sourceGuard
        limiter = WorkLimiter(workers: configuration.workers, queueLimit: configuration.queue)
        results = ResultCache(
            memoryBytes: configuration.memoryCacheBytes, directory: configuration.cacheDirectory,
            diskBytes: configuration.diskCacheBytes, lifetime: TimeInterval(configuration.originTTL))
        loader = DataLoader()
        let s3 = configuration.s3.map { S3Client(configuration: $0) }
        self.s3 = s3
        resultStore = configuration.resultStore.flatMap { path in
            s3.map { ResultStore(client: $0, path: path, metrics: metrics, logger: logger) }
        }
        var download = ImageDownloader.Configuration()
        download.maximumResponseSize = configuration.maxSourceBytes
        download.timeout = configuration.downloadTimeout
        download.remembersFailedURLs = false
        download.allowsResumableDownloads = false
        download.maximumConcurrentDownloads = max(6, configuration.workers * 2)
        let downloader = ImageDownloader(
            configuration: download,
            loader: MeteredLoader(
                base: S3SourceLoader(client: s3, base: GuardedLoader(base: loader, sourceGuard: sourceGuard)),
                metrics: metrics, policies: policies))
        sources = SourceLoader(configuration: configuration, downloader: downloader, policies: policies)
        if configuration.upload {
            try? FileManager.default.createDirectory(at: configuration.resolvedUploadDirectory, withIntermediateDirectories: true)
        }
        local = LocalSource(
            root: configuration.localRoot, uploads: configuration.upload ? configuration.resolvedUploadDirectory : nil, logger: logger)
    }

    /// The bytes of `url`: a file (``LocalSource``) or a remote source (checked by the source
    /// guard first, see ``checkRemote(_:)``).
    func source(of url: URL) async throws(ServerError) -> SourceLoader.Source {
        if LocalSource.isFile(url) { return try await sources.source(.file(local.file(for: url)), local: local) }
        return try await sources.source(.remote(url), local: local)
    }

    /// The source guard's check of a remote source (files are checked by ``LocalSource``).
    func checkRemote(_ url: URL) async throws(ServerError) {
        if !LocalSource.isFile(url) { try await sourceGuard.check(url) }
    }

    /// The result-cache key of `job` for a request with `accept` (parsed only when the job
    /// names no format). A file source's key ends with the file's version (one `stat`), so a changed, replaced or
    /// deleted file is never answered from a result made of its old bytes.
    private func key(for job: PreparedJob, offer: @autoclosure () -> FormatNegotiator.Offer) -> String {
        let key = job.resultKey(quality: job.job.quality ?? configuration.quality, offer: offer)
        return LocalSource.isFile(job.job.source) ? key + "|v:" + local.version(of: job.job.source) : key
    }

    /// The result for `job` in the memory cache, if any, counted as a `result_memory` hit; it
    /// never waits, so ``MemoryHitHandler`` can ask on the event loop.
    func memoryResult(for job: PreparedJob, accept: String?) -> ResultCache.Entry? {
        guard let entry = results.memoryValue(key(for: job, offer: negotiator.offer(accept: accept))) else { return nil }
        metrics.cache("result_memory")
        return entry
    }

    /// The cached result for `job`, if any (the fast path: no worker, no cancellation watch).
    func cachedResult(for job: PreparedJob, accept: String?) async -> ResultCache.Entry? {
        guard let (entry, level) = await results.lookup(key(for: job, offer: negotiator.offer(accept: accept))) else { return nil }
        metrics.cache(level)
        return entry
    }

    /// The encoded result for `job`, negotiating the format from `accept` when the job names none.
    /// Cancelling the calling task (the client went away) leaves the job, which is cancelled when
    /// no other request shares it.
    func respond(to prepared: PreparedJob, accept: String?) async throws(ServerError) -> ResultCache.Entry {
        if let entry = await cachedResult(for: prepared, accept: accept) { return entry }
        let job = prepared.job
        let quality = job.quality ?? configuration.quality
        let offer = negotiator.offer(accept: accept)
        let key = key(for: prepared, offer: offer)
        let made: (Result<ResultCache.Entry, ServerError>, shared: Bool)
        do throws(OspreyError) {
            made = try await jobs.value(for: key) { [self] () async throws(OspreyError) in
                if let stored = await storedResult(key) { return .success(stored) }
                do throws(ServerError) {
                    return .success(try await produce(job, quality: quality, offer: offer, key: key))
                } catch {
                    return .failure(error)
                }
            }
        } catch {
            throw ServerError(status: 503, reason: "the request was cancelled while its result was made")
        }
        if made.shared { metrics.coalesced.increment() }
        return try made.0.get()
    }

    /// The result under `key` in the shared result store, kept in this instance's caches for as
    /// long as it stays fresh; `nil` without a store, on a miss, or when the store fails.
    private func storedResult(_ key: String) async -> ResultCache.Entry? {
        guard let resultStore, let (entry, lifetime) = await resultStore.lookup(key, maxBytes: configuration.maxSourceBytes) else { return nil }
        metrics.cache("result_store")
        await results.store(entry, forKey: key, lifetime: lifetime)
        return entry
    }

    private func produce(_ job: ImageJob, quality: Int, offer: FormatNegotiator.Offer, key: String) async throws(ServerError) -> ResultCache.Entry {
        try await checkRemote(job.source)
        let enqueued = ContinuousClock.now
        metrics.queued.increment()
        // A job refused (429) or cancelled while waiting never reaches the body: leave the gauge then too.
        var waiting = true
        defer { if waiting { metrics.queued.decrement() } }
        return try await limiter.run { [self] () async throws(ServerError) in
            waiting = false
            metrics.queued.decrement()
            metrics.record("queue", ContinuousClock.now - enqueued)
            var processors = job.processors
            for watermark in job.watermarks.reversed() {
                let mark = try await watermarkImage(watermark.url, kind: watermark.kind)
                processors.insert(watermark.processor(mark: mark), at: min(watermark.index, processors.count))
            }
            let source = try await source(of: job.source)
            if let size = source.size { processors = Self.planned(processors, sourceWidth: size.width, sourceHeight: size.height) }
            let processor: any ImageProcessing = processors.isEmpty ? ImageProcessors.Identity() : ImageProcessors.Composition(processors)
            // A still output format (named by the URL) needs the first frame only; an animated
            // output keeps every frame, up to the limit, checked from the header of a cached
            // source before decoding (and after decoding the first time).
            let still = job.format.map { !$0.supportsAnimation } ?? false
            if !still, let frames = source.frames, frames > configuration.maxAnimationFrames {
                throw tooManyFrames(frames)
            }
            // Over the pixel limit by its header: refused before any decode.
            if let size = source.size {
                let frames = still ? 1 : source.frames ?? 1
                do throws(OspreyError) {
                    try DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)
                        .checkSourcePixels(width: size.width, height: size.height, frames: frames)
                } catch {
                    throw ServerError(error)
                }
                // So is a chain that would make an image over the result limit on the way (an
                // enlargement to 16384 pixels a side costs seconds and gigabytes before the check
                // of the result could refuse it).
                let largest = ResultSize.largest(processors, width: size.width, height: size.height)
                guard largest.width <= configuration.maxResultDimension, largest.height <= configuration.maxResultDimension else {
                    throw .unprocessable(
                        "result would be \(largest.width)x\(largest.height), larger than the limit of \(configuration.maxResultDimension) per side")
                }
            }
            if let original = unprocessed(source, job: job) {
                metrics.cache(source.downloaded ? "miss" : "original")
                return await kept(original, job: job, source: source, key: key)
            }
            let processStart = ContinuousClock.now
            let result = try await sources.image(of: source, processor: processor, firstFrameOnly: still)
            metrics.record("process", ContinuousClock.now - processStart)
            if let decoded = result.decoded { metrics.decode(shrunkOnLoad: decoded.shrunkOnLoad) }
            // A miss: this request waited for the source's bytes to come from the origin.
            metrics.cache(source.downloaded ? "miss" : "original")
            let image = result.image
            if !still, image.frameCount > configuration.maxAnimationFrames { throw tooManyFrames(image.frameCount) }
            guard image.width <= configuration.maxResultDimension, image.height <= configuration.maxResultDimension else {
                throw .unprocessable(
                    "result would be \(image.width)x\(image.height), larger than the limit of \(configuration.maxResultDimension) per side")
            }
            let encodeStart = ContinuousClock.now
            let negotiated = job.format ?? negotiator.format(for: image, offer: offer)
            let format: ImageFormat = job.format == nil && negotiated == .jpeg && job.keepsPNG && image.format == .png ? .png : negotiated
            var best = (data: try await encoded(image, as: format, job: job, quality: quality), format: format)
            // f:best: every other format the client accepts too, the smallest kept.
            for candidate in job.bestFormat ? negotiator.candidates(for: image, offer: offer) : [] where candidate != format {
                let data = try await encoded(image, as: candidate, job: job, quality: quality)
                if data.count < best.data.count { best = (data, candidate) }
            }
            metrics.record("encode", ContinuousClock.now - encodeStart)
            return await kept(ResultCache.Entry(data: best.data, format: best.format), job: job, source: source, key: key)
        }
    }

    /// `entry` with the origin's policy, stored in the result cache under `key` for as long as
    /// the source stays fresh (and the policy allows).
    private func kept(
        _ entry: ResultCache.Entry, job: ImageJob, source: SourceLoader.Source, key: String
    ) async -> ResultCache.Entry {
        var entry = entry
        if configuration.respectOriginCacheControl, let policy = policies.policy(for: job.source) {
            entry.policy = policy
        }
        // A result lives no longer than its source stays fresh: after that the source is
        // revalidated, and a changed source makes new results.
        // An upload in a bucket is revalidated for each new variant; its results live the origin TTL.
        let fresh =
            sources.isBucketUpload(job.source)
            ? Duration.seconds(configuration.originTTL) : source.validatedAt + sources.freshness(of: job.source) - ContinuousClock.now
        let lifetime = min(
            Double(fresh.components.seconds) + Double(fresh.components.attoseconds) / 1e18,
            Double(entry.policy.maxAge ?? .max))
        if !entry.policy.noStore, lifetime > 0 {
            await results.store(entry, forKey: key, lifetime: lifetime)
            resultStore?.store(entry, forKey: key, lifetime: lifetime)
        }
        return entry
    }

    /// imgproxy's `skp`: the source's own bytes, unprocessed, when its format is one of the job's
    /// ``ImageJob/skipProcessing`` and the URL names no other output format; else `nil`. An SVG or
    /// a PDF is always rasterised: served as it is from the proxy's origin, it could run scripts.
    private func unprocessed(_ source: SourceLoader.Source, job: ImageJob) -> ResultCache.Entry? {
        let original = source.data.data
        guard !job.skipProcessing.isEmpty, let format = ImageFormat(sniffing: original), !format.isVector, job.skipProcessing.contains(format),
            job.format == nil || job.format == format
        else { return nil }
        return ResultCache.Entry(data: original, format: format)
    }

    /// `processors` with a leading size-dependent ``ResizeStep`` (`300x0`, `orig`, a crop placed
    /// by gravity, `adaptive-fit-in`…) replaced by the fixed steps it amounts to for a source of
    /// this size, so that the pipeline can fold the first of them into the decode
    /// (shrink-on-load, ``ImagePipeline``'s decode planning) as it does for fixed sizes. The
    /// result has the step's size (``ResizeStep/process(_:)`` on the decoded source); its pixels
    /// can differ in the last bits, shrink-on-load resampling differently from a full decode.
    static func planned(_ processors: [any ImageProcessing], sourceWidth: Int, sourceHeight: Int) -> [any ImageProcessing] {
        guard let step = processors.first as? ResizeStep else { return processors }
        var fixed = step.concrete(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        if step.flipHorizontally || step.flipVertically {
            fixed.append(ImageProcessors.Flip(horizontal: step.flipHorizontally, vertical: step.flipVertically))
        }
        return fixed + processors.dropFirst()
    }

    private func tooManyFrames(_ frames: Int) -> ServerError {
        .unprocessable(
            "source has \(frames) animation frames, more than the limit of \(configuration.maxAnimationFrames); "
                + "ask for a still format (jpeg, png) to get its first frame")
    }

    /// A watermark's image: fetched, cached and revalidated like a source, under the same rules.
    private func watermarkImage(_ url: URL, kind: String) async throws(ServerError) -> Image {
        do throws(ServerError) {
            try await checkRemote(url)
            return try await sources.image(
                of: try await source(of: url), processor: ImageProcessors.Identity(), firstFrameOnly: true
            ).image
        } catch {
            var failure = error
            failure.reason = kind + ": " + failure.reason
            throw failure
        }
    }

    /// `image` encoded as `format` with the job's quality for it (`quality` unless the URL gives
    /// one per format), on the pipeline's processing queue with decodes and processors: an encode
    /// (tens of ms for WebP) on a cooperative-pool thread would hold up every other request's task
    /// there, `/health` and `/metrics` included.
    private func encoded(_ image: Image, as format: ImageFormat, job: ImageJob, quality: Int) async throws(ServerError) -> Data {
        let quality = job.quality == nil ? job.formatQuality[format] ?? quality : quality
        return try await pipeline.configuration.processingQueue.run { [self] () throws(ServerError) in
            try encode(image, as: format, quality: quality, maxBytes: job.maxBytes)
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

    /// Records the memory caches' levels and limits for `/metrics`.
    func recordMemoryCaches() {
        metrics.memoryCache("results", bytes: results.memoryCost, limit: results.memoryLimit)
        let sourceMemory = sources.cache.memoryStorage
        metrics.memoryCache("sources", bytes: sourceMemory.totalCost, limit: sourceMemory.config.totalCostLimit)
    }

    /// Shuts the HTTP client down.
    func shutdown() async {
        try? await loader.shutdown()
        await s3?.shutdown()
    }
}
