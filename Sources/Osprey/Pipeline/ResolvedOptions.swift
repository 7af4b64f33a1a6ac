import Foundation

/// A request's ``RequestOption`` items resolved over its pipeline's defaults, once per request: the
/// value every stage reads. Copy-on-write: the fields live in one immutable box, so a copy retains
/// one reference; applying items makes a new box.
package struct ResolvedOptions: Sendable {
    /// Every field, with its default (documented on the ``RequestOption`` case that sets it): what
    /// applying items changes before the result is boxed.
    package struct Values: Sendable {
        var targetCache: ImageCache?
        var originalCache: ImageCache?
        var downloader: ImageDownloader?
        var processor: any ImageProcessing = ImageProcessors.Identity()
        var cacheSerializer: (any CacheSerializer)?
        var imageModifier: (@Sendable (Image) -> Image)?
        var cachePolicy: CachePolicy = .useCached
        var storage: CacheStorage = .memoryAndDisk
        var originalStorage: OriginalStorage = .none
        var cacheWrites: CacheWrites = .inBackground
        var memoryCacheExpiration: StorageExpiration?
        var memoryCacheAccessExtendingExpiration: ExpirationExtending?
        var diskCacheExpiration: StorageExpiration?
        var diskCacheAccessExtendingExpiration: ExpirationExtending?
        var callbackQueue: CallbackQueue = .default
        var processingQueue: DispatchQueue?
        var downloadPriority: DownloadPriority = .normal
        var requestModifier: RequestModifier?
        var requestHeaders: [String: String] = [:]
        var credentials: DownloadCredentials?
        var responseDataModifier: ResponseDataModifier?
        var redirectHandler: RedirectHandler?
        var retryStrategy: (any RetryDeciding)?
        var alternativeSources: [ImageSource] = []
        var retryFailed = false
        var decodingOptions: DecodingOptions = .default
        var diskLookup: DiskLookup = .asynchronous
        var returnsData = false
        var progressiveJPEG: ProgressiveJPEG?
        var animationFramesOnDemand = false
        var lowDataSource: ImageSource?
    }

    /// The immutable box the fields live in, shared by every copy. Its fields are read one by
    /// one (a field read from a struct in the box would copy the whole struct in a debug build).
    private final class Box: Sendable {
        let targetCache: ImageCache?
        let originalCache: ImageCache?
        let downloader: ImageDownloader?
        let processor: any ImageProcessing
        let cacheSerializer: (any CacheSerializer)?
        let imageModifier: (@Sendable (Image) -> Image)?
        let cachePolicy: CachePolicy
        let storage: CacheStorage
        let originalStorage: OriginalStorage
        let cacheWrites: CacheWrites
        let memoryCacheExpiration: StorageExpiration?
        let memoryCacheAccessExtendingExpiration: ExpirationExtending?
        let diskCacheExpiration: StorageExpiration?
        let diskCacheAccessExtendingExpiration: ExpirationExtending?
        let callbackQueue: CallbackQueue
        let processingQueue: DispatchQueue?
        let downloadPriority: DownloadPriority
        let requestModifier: RequestModifier?
        let requestHeaders: [String: String]
        let credentials: DownloadCredentials?
        let responseDataModifier: ResponseDataModifier?
        let redirectHandler: RedirectHandler?
        let retryStrategy: (any RetryDeciding)?
        let alternativeSources: [ImageSource]
        let retryFailed: Bool
        let decodingOptions: DecodingOptions
        let diskLookup: DiskLookup
        let returnsData: Bool
        let progressiveJPEG: ProgressiveJPEG?
        let animationFramesOnDemand: Bool
        let lowDataSource: ImageSource?

        init(_ values: Values) {
            targetCache = values.targetCache
            originalCache = values.originalCache
            downloader = values.downloader
            processor = values.processor
            cacheSerializer = values.cacheSerializer
            imageModifier = values.imageModifier
            cachePolicy = values.cachePolicy
            storage = values.storage
            originalStorage = values.originalStorage
            cacheWrites = values.cacheWrites
            memoryCacheExpiration = values.memoryCacheExpiration
            memoryCacheAccessExtendingExpiration = values.memoryCacheAccessExtendingExpiration
            diskCacheExpiration = values.diskCacheExpiration
            diskCacheAccessExtendingExpiration = values.diskCacheAccessExtendingExpiration
            callbackQueue = values.callbackQueue
            processingQueue = values.processingQueue
            downloadPriority = values.downloadPriority
            requestModifier = values.requestModifier
            requestHeaders = values.requestHeaders
            credentials = values.credentials
            responseDataModifier = values.responseDataModifier
            redirectHandler = values.redirectHandler
            retryStrategy = values.retryStrategy
            alternativeSources = values.alternativeSources
            retryFailed = values.retryFailed
            decodingOptions = values.decodingOptions
            diskLookup = values.diskLookup
            returnsData = values.returnsData
            progressiveJPEG = values.progressiveJPEG
            animationFramesOnDemand = values.animationFramesOnDemand
            lowDataSource = values.lowDataSource
        }

        /// The fields as a value to change.
        var values: Values {
            var values = Values()
            values.targetCache = targetCache
            values.originalCache = originalCache
            values.downloader = downloader
            values.processor = processor
            values.cacheSerializer = cacheSerializer
            values.imageModifier = imageModifier
            values.cachePolicy = cachePolicy
            values.storage = storage
            values.originalStorage = originalStorage
            values.cacheWrites = cacheWrites
            values.memoryCacheExpiration = memoryCacheExpiration
            values.memoryCacheAccessExtendingExpiration = memoryCacheAccessExtendingExpiration
            values.diskCacheExpiration = diskCacheExpiration
            values.diskCacheAccessExtendingExpiration = diskCacheAccessExtendingExpiration
            values.callbackQueue = callbackQueue
            values.processingQueue = processingQueue
            values.downloadPriority = downloadPriority
            values.requestModifier = requestModifier
            values.requestHeaders = requestHeaders
            values.credentials = credentials
            values.responseDataModifier = responseDataModifier
            values.redirectHandler = redirectHandler
            values.retryStrategy = retryStrategy
            values.alternativeSources = alternativeSources
            values.retryFailed = retryFailed
            values.decodingOptions = decodingOptions
            values.diskLookup = diskLookup
            values.returnsData = returnsData
            values.progressiveJPEG = progressiveJPEG
            values.animationFramesOnDemand = animationFramesOnDemand
            values.lowDataSource = lowDataSource
            return values
        }
    }

    private var box: Box

    /// Every field at its default.
    package init() { box = Box(Values()) }

    /// The defaults overridden by `items`, in order.
    package init(_ items: [RequestOption]) {
        self.init()
        apply(items)
    }

    /// These options overridden by `items` (later items win).
    package func merging(_ items: [RequestOption]) -> ResolvedOptions {
        var merged = self
        merged.apply(items)
        return merged
    }

    package var targetCache: ImageCache? { box.targetCache }
    package var originalCache: ImageCache? { box.originalCache }
    package var downloader: ImageDownloader? { box.downloader }
    package var processor: any ImageProcessing { box.processor }
    package var cacheSerializer: (any CacheSerializer)? { box.cacheSerializer }
    package var imageModifier: (@Sendable (Image) -> Image)? { box.imageModifier }
    package var cachePolicy: CachePolicy { box.cachePolicy }
    package var storage: CacheStorage { box.storage }
    package var originalStorage: OriginalStorage { box.originalStorage }
    package var cacheWrites: CacheWrites { box.cacheWrites }
    package var memoryCacheExpiration: StorageExpiration? { box.memoryCacheExpiration }
    package var memoryCacheAccessExtendingExpiration: ExpirationExtending? { box.memoryCacheAccessExtendingExpiration }
    package var diskCacheExpiration: StorageExpiration? { box.diskCacheExpiration }
    package var diskCacheAccessExtendingExpiration: ExpirationExtending? { box.diskCacheAccessExtendingExpiration }
    package var callbackQueue: CallbackQueue { box.callbackQueue }
    package var processingQueue: DispatchQueue? { box.processingQueue }
    package var downloadPriority: DownloadPriority { box.downloadPriority }
    package var requestModifier: RequestModifier? { box.requestModifier }
    package var requestHeaders: [String: String] { box.requestHeaders }
    package var credentials: DownloadCredentials? { box.credentials }
    package var responseDataModifier: ResponseDataModifier? { box.responseDataModifier }
    package var redirectHandler: RedirectHandler? { box.redirectHandler }
    package var retryStrategy: (any RetryDeciding)? { box.retryStrategy }
    package var alternativeSources: [ImageSource] { box.alternativeSources }
    package var retryFailed: Bool { box.retryFailed }
    package var decodingOptions: DecodingOptions { box.decodingOptions }
    package var diskLookup: DiskLookup { box.diskLookup }
    package var returnsData: Bool { box.returnsData }
    package var progressiveJPEG: ProgressiveJPEG? { box.progressiveJPEG }
    package var animationFramesOnDemand: Bool { box.animationFramesOnDemand }
    package var lowDataSource: ImageSource? { box.lowDataSource }

    /// Applies `items` in order, into a new box.
    package mutating func apply(_ items: [RequestOption]) {
        guard !items.isEmpty else { return }
        var values = box.values
        for item in items { values.apply(item) }
        box = Box(values)
    }

    /// The cache-layer options these request options imply.
    var cacheOptions: CacheOptions { cacheOptions(servingExpired: false) }

    /// ``cacheOptions`` whose disk reads answer with expired entries too when `servingExpired`
    /// (the pipeline's disk lookup while the network is unavailable).
    func cacheOptions(servingExpired: Bool) -> CacheOptions {
        CacheOptions(
            memoryExpiration: box.memoryCacheExpiration, diskExpiration: box.diskCacheExpiration,
            memoryExtendingExpiration: box.memoryCacheAccessExtendingExpiration,
            diskExtendingExpiration: box.diskCacheAccessExtendingExpiration,
            storeInMemoryAfterDiskHit: true, serializer: box.cacheSerializer,
            decodingOptions: box.decodingOptions, callbackQueue: CacheOptions.globalQueue, servesExpiredFromDisk: servingExpired)
    }

    /// The download options these request options imply.
    func downloadOptions(validator: CacheValidator? = nil) -> DownloadOptions {
        DownloadOptions(
            priority: box.downloadPriority, callbackQueue: .immediate, headers: box.requestHeaders,
            credentials: box.credentials, validator: validator, requestModifier: box.requestModifier,
            responseDataModifier: box.responseDataModifier, retryFailed: box.retryFailed,
            redirectHandler: box.redirectHandler, retryStrategy: box.retryStrategy)
    }
}

extension ResolvedOptions.Values {
    /// Sets the field `item` names.
    fileprivate mutating func apply(_ item: RequestOption) {
        switch item {
        case .targetCache(let cache): targetCache = cache
        case .originalCache(let cache): originalCache = cache
        case .downloader(let downloader): self.downloader = downloader
        case .processor(let processor): self.processor = processor
        case .cacheSerializer(let serializer): cacheSerializer = serializer
        case .imageModifier(let modifier): imageModifier = modifier
        case .cachePolicy(let policy): cachePolicy = policy
        case .storage(let storage): self.storage = storage
        case .originalStorage(let storage): originalStorage = storage
        case .cacheWrites(let writes): cacheWrites = writes
        case .memoryCacheExpiration(let expiration): memoryCacheExpiration = expiration
        case .memoryCacheAccessExtendingExpiration(let extending): memoryCacheAccessExtendingExpiration = extending
        case .diskCacheExpiration(let expiration): diskCacheExpiration = expiration
        case .diskCacheAccessExtendingExpiration(let extending): diskCacheAccessExtendingExpiration = extending
        case .callbackQueue(let queue): callbackQueue = queue
        case .processingQueue(let queue): processingQueue = queue
        case .downloadPriority(let priority): downloadPriority = priority
        case .requestModifier(let modifier): requestModifier = modifier
        case .requestHeaders(let headers): requestHeaders.merge(headers) { $1 }
        case .credentials(let user, let password): credentials = DownloadCredentials(user: user, password: password)
        case .responseDataModifier(let modify): responseDataModifier = ResponseDataModifier(modify)
        case .redirectHandler(let handle): redirectHandler = RedirectHandler(handle)
        case .retryStrategy(let strategy): retryStrategy = strategy
        case .alternativeSources(let sources): alternativeSources = sources
        case .retryFailed: retryFailed = true
        case .decodingOptions(let options): decodingOptions = options
        case .thumbnail(let thumbnail): decodingOptions.thumbnail = thumbnail
        case .scaleDownLargeImages(let limit): decodingOptions.scaleDownLimitBytes = limit
        case .onlyLoadFirstFrame: decodingOptions.firstFrameOnly = true
        case .diskLookup(let lookup): diskLookup = lookup
        case .returnsData: returnsData = true
        case .progressiveJPEG(let settings): progressiveJPEG = settings
        case .animationFramesOnDemand(let on): animationFramesOnDemand = on
        case .lowDataSource(let source): lowDataSource = source
        }
    }
}
