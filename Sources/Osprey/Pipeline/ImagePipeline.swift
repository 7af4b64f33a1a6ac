import Foundation
import Logging
import Synchronization

/// Loads images: from memory, from disk, or from the network or a data provider, then decodes,
/// processes, caches and delivers them (Kingfisher's `KingfisherManager`, SDWebImage's
/// `SDWebImageManager`, Nuke's `ImagePipeline`).
///
/// The retrieve flow (seed 000):
/// 1. with ``CachePolicy/reload``, load and cache;
/// 2. otherwise the processed image in the target cache: memory, then disk (unless
///    ``CachePolicy/memoryOrLoad``);
/// 3. otherwise the original in the original cache, processed and stored under the processed key;
/// 4. otherwise, with ``CachePolicy/cacheOnly``, fail with ``OspreyError/PipelineReason/imageNotExisting(key:)``;
/// 5. otherwise load, decode, process and cache; the result is delivered at once, or after the
///    cache writes with ``CacheWrites/beforeDelivery``.
///
/// Work is shared between requests, as in Nuke: requests for one source share one download and
/// one decode, and requests whose processors share a prefix (`[resize]`, `[resize, blur]`) share
/// that stage. A stage is cancelled when its last request goes.
///
/// Decode planning is automatic: when the processor chain begins with a resize or a downsample
/// that shrinks the source, the bytes are decoded straight to that size with libvips
/// shrink-on-load, never holding the full-size pixels, and only the rest of the chain runs
/// (see `DecodeInfo`). Requests for other sizes of the same source still share its download.
public final class ImagePipeline: Sendable {
    /// A pipeline's collaborators and defaults.
    public struct Configuration: Sendable {
        /// The cache images are looked up in and stored to. Default ``ImageCache/default``.
        public var cache: ImageCache
        /// The downloader for network sources. Default ``ImageDownloader/default``.
        public var downloader: ImageDownloader
        /// Options every request starts from, resolved once when the pipeline is made; per-call
        /// ``RequestOption``s override them. Default: none (each option's documented default).
        public var defaultOptions: [RequestOption]
        /// Maps a URL to its cache key for network sources whose key was not set explicitly, e.g. to
        /// drop the signature of an expiring URL. Default `nil`: the absolute string.
        public var cacheKeyFilter: (@Sendable (URL) -> String)?
        /// Where decoding and processing run when the options name no queue, and the cache writes a
        /// request waits for (the original's, and the result's with ``CacheWrites/beforeDelivery``).
        /// A stage that follows another on this queue runs in place, on the same thread. Default: a
        /// concurrent queue of the pipeline's own, off the Swift concurrency pool (libvips work is CPU-bound).
        public var processingQueue: DispatchQueue
        /// When set, the pipeline decodes and processes on threads of its own (one per core)
        /// instead of ``processingQueue``, each lowered when it starts to this nice value (0-19,
        /// higher is lower priority; `setpriority` on Linux, where libdispatch's quality of
        /// service does not change a thread's priority). Then, on a busy machine, a UI's main
        /// thread gets the cores before the decodes: what keeps a scrolling GTK grid smooth.
        /// Threads libvips starts from them inherit the value. Downloads (async-http-client's
        /// event loop), cache reads and a request's own ``RequestOption/processingQueue(_:)`` are not affected.
        /// Default ``defaultProcessingThreadNice``: `nil` (no threads of its own) unless a program
        /// set it, as `OspreyApplication.initialize()` of OspreyGTK does (10).
        public var processingThreadNice: Int32?

        /// The ``processingThreadNice`` of configurations made after it is set. Default `nil`; a
        /// GTK program's `OspreyApplication.initialize()` sets 10 before its pipelines are made
        /// (``ImagePipeline/shared`` too, when first used after it).
        public static var defaultProcessingThreadNice: Int32? {
            get { defaultNice.withLock { $0 } }
            set { defaultNice.withLock { $0 = newValue } }
        }
        private static let defaultNice = Mutex<Int32?>(nil)
        /// Decodes downloaded and cached-original bytes. Default ``ImageDecoder`` (libvips).
        public var decoder: any ImageDecoding
        /// Receives a miss's stages: `trace` for the memory miss and the disk lookup, `debug` for
        /// the download (start and end), the decode, each processor and the store, with the
        /// cache key as `osprey.key`. Default ``disabledLogger``: nothing is logged (as
        /// async-http-client's background logger). To see the stages:
        ///
        /// ```swift
        /// var logger = Logger(label: "osprey")
        /// logger.logLevel = .debug
        /// let pipeline = ImagePipeline(configuration: .init(logger: logger))
        /// ```
        public var logger: Logger

        /// A configuration; every argument has the default documented on its property.
        public init(
            cache: ImageCache = .default, downloader: ImageDownloader = .default,
            defaultOptions: [RequestOption] = [], cacheKeyFilter: (@Sendable (URL) -> String)? = nil,
            processingQueue: DispatchQueue = DispatchQueue(label: "osprey.pipeline.processing", qos: .userInitiated, attributes: .concurrent),
            decoder: any ImageDecoding = ImageDecoder(), logger: Logger = Configuration.disabledLogger,
            processingThreadNice: Int32? = Configuration.defaultProcessingThreadNice
        ) {
            self.processingThreadNice = processingThreadNice
            self.decoder = decoder
            self.logger = logger
            self.cache = cache
            self.downloader = downloader
            self.defaultOptions = defaultOptions
            self.cacheKeyFilter = cacheKeyFilter
            self.processingQueue = processingQueue
        }

        /// A logger that discards every message, whatever its level (label `osprey`).
        public static var disabledLogger: Logger {
            Logger(label: "osprey", factory: { _ in SwiftLogNoOpLogHandler() })
        }
    }

    /// The shared pipeline, with the default cache and downloader.
    public static let shared = ImagePipeline()

    /// This pipeline's configuration.
    public let configuration: Configuration

    let fetchJobs = JobRegistry<HashedKey<FetchJobKey>, FetchedSource>()
    let processJobs = JobRegistry<HashedKey<ProcessJobKey>, ProcessedImage>()
    let deliverJobs = JobRegistry<HashedKey<DeliverJobKey>, DeliveredImage>()
    /// The data stage's jobs (``data(for:options:maxAge:honoringOriginMaxAge:)``).
    let dataJobs = JobRegistry<DataJobKey, ImageData>()
    /// The progressive previewers of downloads that requests listen to (``ProgressiveJPEG``).
    let previews = PreviewRegistry()
    /// The level of ``handleMemoryPressure(_:)`` and the prefetchers that pause on it.
    let memoryPressureState = MemoryPressureState()
    /// The variants targets were given, for ``TargetSettings/showsCachedVariantFirst``.
    let variants = VariantIndex()
    /// What ``handleNetworkChange(available:metered:)`` and ``handlePowerSaver(_:)`` told, and who waits for the network.
    let networkState = NetworkState()
    /// ``Configuration/defaultOptions``, resolved once.
    package let defaultOptions: ResolvedOptions
    /// Where stages run when the options name no queue: the pipeline's own threads with
    /// ``Configuration/processingThreadNice``, else ``Configuration/processingQueue``.
    let defaultPlace: ProcessingPlace

    /// A pipeline with `configuration` (default: all defaults).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        defaultOptions = ResolvedOptions(configuration.defaultOptions)
        if let nice = configuration.processingThreadNice {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            defaultPlace = .threads(ProcessingThreads(count: cores, nice: nice, name: "osprey.pipeline.processing"))
        } else {
            defaultPlace = .queue(configuration.processingQueue)
        }
    }

    /// A pipeline with a cache and a downloader, other settings default.
    public convenience init(cache: ImageCache, downloader: ImageDownloader = .default) {
        self.init(configuration: Configuration(cache: cache, downloader: downloader))
    }

    // MARK: - async/await

    /// Loads the image for `source`. Cancelling the calling task cancels this request (shared work
    /// goes on while other requests need it).
    ///
    /// With ``CachePolicy/revalidate`` this returns the cached image; the revalidation runs in
    /// the background and updates the cache (use ``imageTask(for:options:)``'s events or a
    /// target's `setImage` to receive the second result).
    ///
    /// A memory-cache hit is answered on the caller's executor without suspending: the function is
    /// `nonisolated(nonsending)` and inlinable, so the lookup runs inline in the caller (no hop to
    /// the global pool and back, no async frame; a hit from the main actor stays on it). A miss
    /// continues on the global concurrent executor.
    @inlinable
    public nonisolated(nonsending) func image(for source: ImageSource, options items: [RequestOption] = []) async throws(OspreyError) -> ImageResult {
        var request: ResolvedRequest?
        if let hit = resolve(source, items: items, miss: &request) { return hit }
        return try await retrieveMiss(request)
    }

    /// The rest of ``image(for:options:)`` after a memory miss (`request` is set by the resolution
    /// on every miss), on the global concurrent executor.
    @usableFromInline @concurrent
    func retrieveMiss(_ request: ResolvedRequest?) async throws(OspreyError) -> ImageResult {
        guard let request else { preconditionFailure("a miss always carries its resolved request") }
        return try await retrieve(request, progress: nil, refresh: nil)
    }

    /// The lookup order (``ResolvedRequest/step(after:)``, run by ``PipelineRequest``) for a resolved request, awaited.
    /// Cancelling the calling task cancels the request.
    /// `preview` (default `nil`) gets each progressive preview, on the thread that made it.
    func retrieve(
        _ request: ResolvedRequest, progress: JobProgressHandler?, preview: (@Sendable (ImageResult) -> Void)? = nil,
        refresh: (@Sendable (ImageResult?) -> Void)?
    ) async throws(OspreyError) -> ImageResult {
        let task = ImageTask(completed: false, priority: request.options.downloadPriority)
        let result = await withTaskCancellationHandler {
            // Unsafe (no checking canary to allocate): resumed exactly once, as argued in
            // ImageTask.StateMachine (ImageTask+StateMachine.swift).
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<ImageResult, OspreyError>, Never>) in
                PipelineRequest(
                    pipeline: self, request: request, task: task, progress: progress, refresh: refresh, preview: preview,
                    callbackQueue: .immediate
                ) { continuation.resume(returning: $0) }.start()
            }
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }

    /// The image for `url` (a network source with the default cache key).
    public nonisolated(nonsending) func image(for url: URL, options items: [RequestOption] = []) async throws(OspreyError) -> ImageResult {
        try await image(for: .url(url), options: items)
    }

    /// The processed image for `source` if it is in the memory cache, synchronously; `nil` otherwise.
    /// The image modifier is applied.
    public func cachedImage(for source: ImageSource, options items: [RequestOption] = []) -> Image? {
        // The defaults borrowed without items, as in resolve(_:items:miss:) (a closure taking either form costs
        // retains in the debug build the counted check runs).
        items.isEmpty ? memoryImage(source, options: defaultOptions) : memoryImage(source, options: defaultOptions.merging(items))
    }

    /// Where the processed image for `source` is cached (none, memory or disk), without loading it.
    public func cachedType(for source: ImageSource, options items: [RequestOption] = []) -> CacheType {
        let options = resolvedOptions(items)
        let cache = options.targetCache ?? configuration.cache
        return cache.imageCachedType(forKey: cacheKey(for: source), processorIdentifier: options.processor.identifier)
    }

    /// Starts a request for `source` and returns its task: its ``ImageTask/events`` (progress,
    /// progressive previews, the result), its ``ImageTask/priority`` to change while it runs,
    /// ``ImageTask/cancel()``. A memory hit is a task already finished with its result.
    ///
    /// ```swift
    /// let task = pipeline.imageTask(for: .url(url), options: [.progressiveJPEG()])
    /// for await event in task.events {
    ///     if case .preview(let preview) = event { show(preview.image) }
    ///     if case .finished(let result) = event { show(try result.get().image) }
    /// }
    /// ```
    public func imageTask(for source: ImageSource, options items: [RequestOption] = []) -> ImageTask {
        let options = resolvedOptions(items)
        let (events, continuation) = AsyncStream<ImageTask.Event>.makeStream()
        var miss: ResolvedRequest?
        if let hit = resolve(source, options: options, miss: &miss) {
            continuation.yield(.finished(.success(hit)))
            continuation.finish()
            return ImageTask(completed: true, events: events)
        }
        guard let request = miss else { preconditionFailure("a miss always carries its resolved request") }
        let task = ImageTask(completed: false, priority: options.downloadPriority, events: events)
        // Previews arrive on the processing threads, the result on a download's or the disk's: the
        // sender keeps their order and feeds the stream outside its lock.
        let sender = ImageTask.EventSender(continuation)
        // With revalidation, a hit's result is followed by the new image, if any: the stream ends then.
        let refreshFollows = options.cachePolicy == .revalidate
        continuation.onTermination = { _ in task.cancel() }
        PipelineRequest(
            pipeline: self, request: request, task: task,
            progress: { received, expected in sender.report(.progress(received: received, expected: expected)) },
            refresh: { refreshed in sender.complete(refreshed.map { .finished(.success($0)) }, last: true) },
            preview: { sender.report(.preview($0)) }, callbackQueue: .immediate
        ) { result in
            let followed = if case .success(let image) = result { refreshFollows && image.cacheType != .none } else { false }
            sender.complete(.finished(result), last: !followed)
        }.start()
        return task
    }

    // MARK: - Completion handlers

    /// Loads the image for `source` and calls `completion` on the options' callback queue
    /// (default ``CallbackQueue/default``, a shared serial queue): once, or a second time with ``CachePolicy/revalidate``
    /// when the server had a new image (``ImageResult/isRefresh``). A memory hit completes before
    /// this returns when the callback queue is `.immediate`.
    ///
    /// `progress` (default `nil`) gets (bytes received, bytes expected) on the callback queue while
    /// the image downloads. A request that joins a download already started by a request without
    /// a progress handler gets no progress reports, only its result.
    ///
    /// `preview` (default `nil`) gets each progressive preview (``ImageResult/isPreview``) on the
    /// callback queue before the result, when the options include
    /// ``RequestOption/progressiveJPEG(_:)`` and the source downloads as a progressive JPEG: what a
    /// target shows while the image loads. On a serial callback queue (the default) no preview
    /// comes after the result; on `.immediate` one may run while the result is delivered. A
    /// request that joins a download after it started gets the previews from then on, if a
    /// request listening for previews was there when it started.
    ///
    /// - Returns: a task to cancel the request; a cancelled request completes with
    ///   ``OspreyError/PipelineReason/cancelled(source:)``.
    @discardableResult
    package func loadImage(
        with source: ImageSource, options items: [RequestOption] = [],
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        preview: (@Sendable (ImageResult) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ImageResult, OspreyError>) -> Void
    ) -> ImageTask {
        let options = resolvedOptions(items)
        let queue = options.callbackQueue
        var request: ResolvedRequest?
        if let hit = resolve(source, options: options, miss: &request) {
            queue.execute { completion(.success(hit)) }
            return ImageTask(completed: true)
        }
        guard let request else { preconditionFailure("a miss always carries its resolved request") }
        let imageTask = ImageTask(completed: false, priority: options.downloadPriority)
        var progressOnQueue: JobProgressHandler?
        if let progress {
            progressOnQueue = { received, expected in queue.execute { progress(received, expected) } }
        }
        var refresh: (@Sendable (ImageResult?) -> Void)?
        if options.cachePolicy == .revalidate {
            refresh = { refreshed in
                if let refreshed, !imageTask.isCancelled { queue.execute { completion(.success(refreshed)) } }
            }
        }
        PipelineRequest(
            pipeline: self, request: request, task: imageTask, progress: progressOnQueue, refresh: refresh, preview: preview,
            callbackQueue: queue, completion: completion
        ).start()
        return imageTask
    }

    // MARK: - Keys and options

    /// The cache key of `source`, through ``Configuration/cacheKeyFilter`` for network sources
    /// whose key was not set explicitly.
    public func cacheKey(for source: ImageSource) -> String {
        if let filter = configuration.cacheKeyFilter, case .network(let resource) = source,
            resource.cacheKey == resource.url.absoluteString
        {
            return filter(resource.url)
        }
        return source.cacheKey
    }

    /// The memory-cache key of `source` processed by `items` (default none): the key a target's
    /// ``TargetSettings/placeholderMemoryKey`` names to show that image while another loads.
    public func memoryCacheKey(for source: ImageSource, options items: [RequestOption] = []) -> String {
        ImageCache.computedKey(cacheKey(for: source), processorIdentifier: resolvedOptions(items).processor.identifier)
    }

    /// The processed image in the target memory cache, through the image modifier, or `nil`.
    func memoryImage(_ source: ImageSource, options: ResolvedOptions) -> Image? {
        guard options.cachePolicy.readsCache else { return nil }
        let key = ImageCache.computedKey(cacheKey(for: source), processorIdentifier: options.processor.identifier)
        guard case .hit(let image) = memoryLookup(key, options: options) else { return nil }
        guard let modifier = options.imageModifier else { return image }
        return modifier(image)
    }
}
