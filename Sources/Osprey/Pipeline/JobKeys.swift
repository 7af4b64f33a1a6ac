import Synchronization

/// What tells two loads of a source apart: the part of a job key that the fetch stage
/// (``FetchJobKey``) and the data stage (``DataJobKey``) share, built in one place.
/// (Plain values, hashed once per lookup: building a string key cost more than the lookup.)
struct SourceJobKey: Hashable, Sendable {
    var downloader: ObjectIdentifier
    /// The cache the original bytes are read from and written to.
    var cache: ObjectIdentifier
    var cacheKey: String
    /// The source URL when it differs from the cache key (usually it is the key), else `nil`.
    var url: String?
    var headers: [String: String]
    var user: String?
    /// Non-zero for requests with a modifier, redirect handler or retry strategy: closures cannot
    /// be compared, so such requests share nothing.
    var unshared: UInt64

    private static let nextUnshared = Atomic<UInt64>(0)

    init(_ source: ImageSource, key: String, cache: ImageCache, downloader: ImageDownloader, options: ResolvedOptions) {
        self.downloader = ObjectIdentifier(downloader)
        self.cache = ObjectIdentifier(cache)
        cacheKey = key
        let url = source.url?.absoluteString
        self.url = url == key ? nil : url
        headers = options.requestHeaders
        user = options.credentials?.user
        let hasClosures =
            options.requestModifier != nil || options.responseDataModifier != nil
            || options.redirectHandler != nil || options.retryStrategy != nil
        unshared = hasClosures ? Self.nextUnshared.add(1, ordering: .relaxed).newValue : 0
    }

    /// Hashes what usually tells loads apart: the cache key, the URL when it differs, and the
    /// unshared number. Keys that are equal hash equally; the rest is left to `==`.
    func hash(into hasher: inout Hasher) {
        hasher.combine(cacheKey)
        hasher.combine(url)
        hasher.combine(unshared)
    }
}

/// The key under which fetch work is shared: everything that changes the original image.
struct FetchJobKey: Hashable, Sendable {
    var source: SourceJobKey
    var isProvider: Bool
    var decoding: DecodingOptions
    /// How caches are read (``CachePolicy/forFetch``).
    var cachePolicy: CachePolicy
    /// The original bytes go to the original cache's disk as soon as they are loaded
    /// (``ResolvedRequest/storesOriginalSeparately``).
    var storesOriginal: Bool

    func hash(into hasher: inout Hasher) { source.hash(into: &hasher) }

    init(_ request: ResolvedRequest) {
        let options = request.options
        source = SourceJobKey(
            request.source, key: request.key, cache: request.originalCache, downloader: request.downloader, options: options)
        isProvider = request.source.url == nil
        decoding = options.decodingOptions
        cachePolicy = options.cachePolicy.forFetch
        storesOriginal = request.storesOriginalSeparately
    }
}

/// The key under which data jobs (``ImagePipeline/data(for:options:maxAge:honoringOriginMaxAge:)``)
/// are shared: everything that changes the bytes or how they are looked up.
struct DataJobKey: Hashable, Sendable {
    var source: SourceJobKey
    var policy: CachePolicy
    var freshness: Duration
    var honoringOriginMaxAge: Bool

    init(_ request: DataRequest) {
        source = SourceJobKey(
            request.source, key: request.key, cache: request.cache, downloader: request.downloader, options: request.options)
        policy = request.options.cachePolicy
        freshness = request.freshness
        honoringOriginMaxAge = request.honoringOriginMaxAge
    }
}

/// The key of a processing stage: the fetch it starts from and the processors it runs.
struct ProcessJobKey: Hashable, Sendable {
    var fetch: HashedKey<FetchJobKey>
    /// The identifiers of the processors run so far, joined with commas.
    var processors: String
}

/// The key of the last stage: what is fetched, how it is processed, and where it is stored.
struct DeliverJobKey: Hashable, Sendable {
    var fetch: HashedKey<FetchJobKey>
    var processor: String
    var cache: ObjectIdentifier
    var originalCache: ObjectIdentifier
    var storage: CacheStorage
    var cacheWrites: CacheWrites
    var originalStorage: OriginalStorage
    /// The request takes an animation as its first frame and a frame decoder
    /// (``ImagePipeline/decodesFramesOnDemand(_:)``): such requests never share a result with those
    /// that want every frame decoded.
    var framesOnDemand: Bool

    init(_ request: ResolvedRequest, fetch: HashedKey<FetchJobKey>, framesOnDemand: Bool) {
        let options = request.options
        self.fetch = fetch
        processor = request.processorIdentifier
        cache = ObjectIdentifier(request.cache)
        originalCache = ObjectIdentifier(request.originalCache)
        storage = options.storage
        cacheWrites = options.cacheWrites
        originalStorage = options.originalStorage
        self.framesOnDemand = framesOnDemand
    }
}
