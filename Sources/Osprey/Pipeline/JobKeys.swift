import Synchronization

/// The key under which fetch work is shared: everything that changes the original image.
/// (Plain values, hashed once per lookup: building a string key cost more than the lookup.)
struct FetchJobKey: Hashable, Sendable {
    var downloader: ObjectIdentifier
    var originalCache: ObjectIdentifier
    var cacheKey: String
    /// The source URL when it differs from the cache key (usually it is the key), else `nil`.
    var url: String?
    var isProvider: Bool
    var decoding: DecodingOptions
    /// How caches are read (``CachePolicy/forFetch``).
    var cachePolicy: CachePolicy
    var headers: [String: String]
    var user: String?
    /// The original bytes go to the original cache's disk as soon as they are loaded
    /// (``ResolvedRequest/storesOriginalSeparately``).
    var storesOriginal: Bool
    /// Non-zero for requests with a modifier, redirect handler or retry strategy: closures cannot
    /// be compared, so such requests share nothing.
    var unshared: UInt64

    private static let nextUnshared = Atomic<UInt64>(0)

    /// The `unshared` part of a key for `options`: 0 when they can share work, else a number no
    /// other request has (a request modifier, response data modifier, redirect handler or retry
    /// strategy is a closure, which cannot be compared).
    static func unshared(_ options: ResolvedOptions) -> UInt64 {
        let hasClosures =
            options.requestModifier != nil || options.responseDataModifier != nil
            || options.redirectHandler != nil || options.retryStrategy != nil
        return hasClosures ? nextUnshared.add(1, ordering: .relaxed).newValue : 0
    }

    /// Hashes what usually tells fetches apart: the cache key, the URL when it differs, and the
    /// unshared number. Keys that are equal hash equally; the rest is left to `==`.
    func hash(into hasher: inout Hasher) {
        hasher.combine(cacheKey)
        hasher.combine(url)
        hasher.combine(unshared)
    }

    init(_ request: ResolvedRequest) {
        let source = request.source, key = request.key, options = request.options
        downloader = ObjectIdentifier(request.downloader)
        originalCache = ObjectIdentifier(request.originalCache)
        cacheKey = key
        let url = source.url?.absoluteString
        self.url = url == key ? nil : url
        isProvider = source.url == nil
        decoding = options.decodingOptions
        cachePolicy = options.cachePolicy.forFetch
        headers = options.requestHeaders
        user = options.credentials?.user
        storesOriginal = request.storesOriginalSeparately
        unshared = Self.unshared(options)
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

/// The key under which data jobs (``ImagePipeline/data(for:options:maxAge:honoringOriginMaxAge:)``)
/// are shared: everything that changes the bytes or how they are looked up. (Its own fields rather
/// than a part shared with ``FetchJobKey``: a debug build copied a nested key whole at every hash.)
struct DataJobKey: Hashable, Sendable {
    var cacheKey: String
    var url: String?
    var cache: ObjectIdentifier
    var downloader: ObjectIdentifier
    var policy: CachePolicy
    var freshness: Duration
    var honoringOriginMaxAge: Bool
    var headers: [String: String]
    var user: String?
    /// Non-zero for requests with closures (which cannot be compared): they share nothing.
    var unshared: UInt64

    init(_ request: DataRequest) {
        let options = request.options
        cacheKey = request.key
        url = request.source.url?.absoluteString
        cache = ObjectIdentifier(request.cache)
        downloader = ObjectIdentifier(request.downloader)
        policy = options.cachePolicy
        freshness = request.freshness
        honoringOriginMaxAge = request.honoringOriginMaxAge
        headers = options.requestHeaders
        user = options.credentials?.user
        unshared = FetchJobKey.unshared(options)
    }
}
