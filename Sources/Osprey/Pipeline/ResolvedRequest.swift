/// One request after resolution, made in one place (``ImagePipeline/resolve(_:options:miss:)``)
/// for all three entry points (`image(for:)`, `imageTask(for:)`, `loadImage(with:)`), and
/// handed unchanged to ``PipelineRequest``, its stages (``StageContext``) and the revalidation:
/// nothing downstream looks the options, caches, keys or downloader up again.
///
/// A class: the request, its stages and the revalidation share one instance (a copy of a value
/// this size would retain each of its references again). It is
/// made only after a memory miss, so a hit builds none of it.
@usableFromInline
final class ResolvedRequest: Sendable {
    /// The source being tried: the request's own, or one of its alternative sources.
    let source: ImageSource
    /// The request's options (copy-on-write: its stages share one box).
    let options: ResolvedOptions
    /// Where the processed image is looked up and stored (the options' target cache, else the pipeline's).
    let cache: ImageCache
    /// Where the original is looked up and stored (the options' original cache, else `cache`).
    let originalCache: ImageCache
    /// Loads network sources and providers (the options' downloader, else the pipeline's).
    let downloader: ImageDownloader
    /// The source's cache key (through the pipeline's cache-key filter).
    let key: String
    /// The processor's identifier, read once (an existential call).
    let processorIdentifier: String
    /// The key of the processed image in `cache`.
    let computedKey: String
    /// The target memory cache's token for the resolution's miss of `computedKey`; `nil` when it
    /// was not looked up (``CachePolicy/reload``, ``CachePolicy/revalidate``,
    /// alternative sources): ``PipelineRequest`` then looks up itself.
    let memoryMiss: MemoryMiss?
    /// The steps of the lookup order this request takes (``RetrievePlan/init(_:originalIsTarget:)``).
    let plan: RetrievePlan

    init(
        source: ImageSource, options: ResolvedOptions, cache: ImageCache, key: String, processorIdentifier: String,
        computedKey: String, memoryMiss: MemoryMiss?, pipeline: ImagePipeline
    ) {
        self.source = source
        self.options = options
        self.cache = cache
        let originalCache = options.originalCache ?? cache
        self.originalCache = originalCache
        self.downloader = options.downloader ?? pipeline.configuration.downloader
        self.key = key
        self.processorIdentifier = processorIdentifier
        self.computedKey = computedKey
        self.memoryMiss = memoryMiss
        plan = RetrievePlan(options, originalIsTarget: processorIdentifier.isEmpty && originalCache === cache)
    }

    /// Whether the original bytes are written to the original cache apart from the processed
    /// image: with ``OriginalStorage/disk``, unless the processed image's own disk entry is the
    /// original (no processor, stored to disk, in the same cache).
    var storesOriginalSeparately: Bool {
        guard options.originalStorage == .disk else { return false }
        return !processorIdentifier.isEmpty || !options.storage.toDisk || originalCache !== cache
    }

    /// The same request for an alternative source: its own keys, not looked up in memory yet.
    func alternative(_ source: ImageSource, pipeline: ImagePipeline) -> ResolvedRequest {
        let key = pipeline.cacheKey(for: source)
        return ResolvedRequest(
            source: source, options: options, cache: cache, key: key, processorIdentifier: processorIdentifier,
            computedKey: ImageCache.computedKey(key, processorIdentifier: processorIdentifier), memoryMiss: nil, pipeline: pipeline)
    }
}

extension ImagePipeline {
    /// Resolves a request with per-call `items` over the pipeline's defaults and answers it from
    /// memory when it can: the hit, or `nil` with `miss` set to the resolved request.
    /// (An optional result, not an enum carrying the request: every hit would pay for moving it.)
    @usableFromInline
    func resolve(_ source: ImageSource, items: [RequestOption], miss: inout ResolvedRequest?) -> ImageResult? {
        // Without items the defaults are passed borrowed (a `let` of the pipeline): a hit retains no options box.
        if items.isEmpty { return resolve(source, options: defaultOptions, miss: &miss) }
        return resolve(source, options: defaultOptions.merging(items), miss: &miss)
    }

    /// The one resolution of a request with its resolved `options`: the memory hit, or `nil` with `miss` set.
    /// ``CachePolicy/revalidate`` does not answer here: its hit also starts the revalidation
    /// (``PipelineRequest`` looks memory up for it).
    @inline(__always)
    func resolve(_ source: ImageSource, options: ResolvedOptions, miss: inout ResolvedRequest?) -> ImageResult? {
        let source = options.lowDataSource == nil ? source : dataSavingSource(source, options)
        let policy = options.cachePolicy
        if !policy.readsDisk, servesExpired(source) { return resolveOffline(source, options: options, miss: &miss) }
        let key = cacheKey(for: source)
        let identifier = options.processor.identifier
        let computed = ImageCache.computedKey(key, processorIdentifier: identifier)
        var token: MemoryMiss?
        if policy != .reload && policy != .revalidate {
            switch memoryLookup(computed, options: options) {
            case .hit(let image): return ImageResult(image: options.imageModifier?(image) ?? image, cacheType: .memory, source: source)
            case .miss(let missed): token = missed
            }
        }
        miss = ResolvedRequest(
            source: source, options: options, cache: options.targetCache ?? configuration.cache, key: key,
            processorIdentifier: identifier, computedKey: computed, memoryMiss: token, pipeline: self)
        return nil
    }

    /// ``resolve(_:options:miss:)`` while the network is unavailable for a policy that skips the
    /// disk (``CachePolicy/reload``, ``CachePolicy/memoryOrLoad``): every cache is read first
    /// (``offlinePolicy(_:_:)``).
    @inline(never)
    func resolveOffline(_ source: ImageSource, options: ResolvedOptions, miss: inout ResolvedRequest?) -> ImageResult? {
        resolve(source, options: offlinePolicy(options, source), miss: &miss)
    }

    /// The one memory lookup of the pipeline: the processed image under `computedKey` in the
    /// options' target memory cache, or that cache's token for the miss.
    @inline(__always)
    func memoryLookup(_ computedKey: String, options: ResolvedOptions) -> MemoryStorage.Backend<Image>.Lookup {
        // The caches are borrowed, not copied out of an optional: a hit retains nothing it need not.
        if let target = options.targetCache {
            return target.memoryStorage.lookup(forKey: computedKey, extendingExpiration: options.memoryCacheAccessExtendingExpiration)
        }
        return configuration.cache.memoryStorage.lookup(forKey: computedKey, extendingExpiration: options.memoryCacheAccessExtendingExpiration)
    }

    /// Per-call items over the pipeline's defaults.
    func resolvedOptions(_ items: [RequestOption]) -> ResolvedOptions {
        items.isEmpty ? defaultOptions : defaultOptions.merging(items)
    }
}

/// A miss of a pipeline's memory cache, remembered for the last stage (``MemoryStorage/Backend/Miss``).
@usableFromInline
typealias MemoryMiss = MemoryStorage.Backend<Image>.Miss
