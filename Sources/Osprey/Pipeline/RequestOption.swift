import Foundation

/// One per-call option, as Kingfisher's `KingfisherOptionsInfoItem`: callers pass a list, the
/// pipeline parses it once into ``ResolvedOptions`` on top of its defaults. Each case documents the
/// ``ResolvedOptions`` property it sets; see there for defaults.
public enum RequestOption: Sendable {
    /// ``ResolvedOptions/targetCache``.
    case targetCache(ImageCache)
    /// ``ResolvedOptions/originalCache``.
    case originalCache(ImageCache)
    /// ``ResolvedOptions/downloader``.
    case downloader(ImageDownloader)
    /// ``ResolvedOptions/processor``.
    case processor(any ImageProcessing)
    /// ``ResolvedOptions/cacheSerializer``.
    case cacheSerializer(any CacheSerializer)
    /// ``ResolvedOptions/imageModifier``.
    case imageModifier(@Sendable (Image) -> Image)
    /// ``ResolvedOptions/cachePolicy``.
    case cachePolicy(CachePolicy)
    /// ``ResolvedOptions/storage``.
    case storage(CacheStorage)
    /// ``ResolvedOptions/originalStorage``.
    case originalStorage(OriginalStorage)
    /// ``ResolvedOptions/cacheWrites``.
    case cacheWrites(CacheWrites)
    /// ``ResolvedOptions/memoryCacheExpiration``.
    case memoryCacheExpiration(StorageExpiration)
    /// ``ResolvedOptions/memoryCacheAccessExtendingExpiration``.
    case memoryCacheAccessExtendingExpiration(ExpirationExtending)
    /// ``ResolvedOptions/diskCacheExpiration``.
    case diskCacheExpiration(StorageExpiration)
    /// ``ResolvedOptions/diskCacheAccessExtendingExpiration``.
    case diskCacheAccessExtendingExpiration(ExpirationExtending)
    /// ``ResolvedOptions/callbackQueue``.
    case callbackQueue(CallbackQueue)
    /// ``ResolvedOptions/processingQueue``.
    case processingQueue(DispatchQueue)
    /// ``ResolvedOptions/downloadPriority``.
    case downloadPriority(DownloadPriority)
    /// ``ResolvedOptions/requestModifier``.
    case requestModifier(RequestModifier)
    /// ``ResolvedOptions/requestHeaders`` (merged into the existing headers).
    case requestHeaders([String: String])
    /// ``ResolvedOptions/credentials``.
    case credentials(DownloadCredentials)
    /// ``ResolvedOptions/responseDataModifier``.
    case responseDataModifier(ResponseDataModifier)
    /// ``ResolvedOptions/redirectHandler``.
    case redirectHandler(RedirectHandler)
    /// ``ResolvedOptions/retryStrategy``.
    case retryStrategy(any RetryStrategy)
    /// ``ResolvedOptions/alternativeSources``.
    case alternativeSources([ImageSource])
    /// ``ResolvedOptions/retryFailed``.
    case retryFailed
    /// ``ResolvedOptions/decodingOptions``.
    case decodingOptions(DecodingOptions)
    /// Sets ``DecodingOptions/thumbnail`` in ``ResolvedOptions/decodingOptions``.
    case thumbnail(DecodingOptions.Thumbnail)
    /// Sets ``DecodingOptions/scaleDownLimitBytes`` (SDWebImage's default is 60 MiB).
    case scaleDownLargeImages(limitBytes: Int = DecodingOptions.defaultScaleDownLimitBytes)
    /// Sets ``DecodingOptions/firstFrameOnly``.
    case onlyLoadFirstFrame
    /// ``ResolvedOptions/diskLookup``.
    case diskLookup(DiskLookup)
    /// ``ResolvedOptions/returnsData``.
    case returnsData
    /// ``ResolvedOptions/progressiveJPEG``: previews of a progressive JPEG while it downloads.
    case progressiveJPEG(ProgressiveJPEG = .default)
    /// ``ResolvedOptions/animationFramesOnDemand`` (default argument `true`): an animated GIF or
    /// WebP comes as its first frame and an ``AnimationFrameDecoder`` over its bytes.
    case animationFramesOnDemand(Bool = true)
}

extension ResolvedOptions {
    /// Applies `items` in order.
    public mutating func apply(_ items: [RequestOption]) {
        for item in items {
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
            case .credentials(let credentials): self.credentials = credentials
            case .responseDataModifier(let modifier): responseDataModifier = modifier
            case .redirectHandler(let handler): redirectHandler = handler
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
            }
        }
    }
}
