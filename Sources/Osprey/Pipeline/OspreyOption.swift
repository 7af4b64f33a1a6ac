import Foundation

/// One per-call option, as Kingfisher's `KingfisherOptionsInfoItem`: callers pass a list, the
/// pipeline parses it once into ``OspreyOptions`` on top of its defaults. Each case documents the
/// ``OspreyOptions`` property it sets; see there for defaults.
public enum OspreyOption: Sendable {
    /// ``OspreyOptions/targetCache``.
    case targetCache(ImageCache)
    /// ``OspreyOptions/originalCache``.
    case originalCache(ImageCache)
    /// ``OspreyOptions/downloader``.
    case downloader(ImageDownloader)
    /// ``OspreyOptions/processor``.
    case processor(any ImageProcessing)
    /// ``OspreyOptions/cacheSerializer``.
    case cacheSerializer(any CacheSerializer)
    /// ``OspreyOptions/imageModifier``.
    case imageModifier(@Sendable (Image) -> Image)
    /// ``OspreyOptions/cachePolicy``.
    case cachePolicy(CachePolicy)
    /// ``OspreyOptions/storage``.
    case storage(CacheStorage)
    /// ``OspreyOptions/originalStorage``.
    case originalStorage(OriginalStorage)
    /// ``OspreyOptions/cacheWrites``.
    case cacheWrites(CacheWrites)
    /// Kingfisher's name for ``CachePolicy/reload`` in ``OspreyOptions/cachePolicy``.
    case forceRefresh
    /// Kingfisher's name for ``CachePolicy/cacheOnly`` in ``OspreyOptions/cachePolicy``.
    case onlyFromCache
    /// Kingfisher's name for ``CachePolicy/memoryOrLoad`` in ``OspreyOptions/cachePolicy``.
    case fromMemoryCacheOrRefresh
    /// Kingfisher's name for ``CacheStorage/memory`` in ``OspreyOptions/storage``.
    case cacheMemoryOnly
    /// Kingfisher's name for ``CacheWrites/beforeDelivery`` in ``OspreyOptions/cacheWrites``.
    case waitForCache
    /// Kingfisher's name for ``OriginalStorage/disk`` in ``OspreyOptions/originalStorage``.
    case cacheOriginalImage
    /// ``OspreyOptions/memoryCacheExpiration``.
    case memoryCacheExpiration(StorageExpiration)
    /// ``OspreyOptions/memoryCacheAccessExtendingExpiration``.
    case memoryCacheAccessExtendingExpiration(ExpirationExtending)
    /// ``OspreyOptions/diskCacheExpiration``.
    case diskCacheExpiration(StorageExpiration)
    /// ``OspreyOptions/diskCacheAccessExtendingExpiration``.
    case diskCacheAccessExtendingExpiration(ExpirationExtending)
    /// ``OspreyOptions/callbackQueue``.
    case callbackQueue(CallbackQueue)
    /// ``OspreyOptions/processingQueue``.
    case processingQueue(DispatchQueue)
    /// ``OspreyOptions/downloadPriority``.
    case downloadPriority(DownloadPriority)
    /// ``OspreyOptions/requestModifier``.
    case requestModifier(RequestModifier)
    /// ``OspreyOptions/requestHeaders`` (merged into the existing headers).
    case requestHeaders([String: String])
    /// ``OspreyOptions/credentials``.
    case credentials(DownloadCredentials)
    /// ``OspreyOptions/responseDataModifier``.
    case responseDataModifier(ResponseDataModifier)
    /// ``OspreyOptions/redirectHandler``.
    case redirectHandler(RedirectHandler)
    /// ``OspreyOptions/retryStrategy``.
    case retryStrategy(any RetryStrategy)
    /// ``OspreyOptions/alternativeSources``.
    case alternativeSources([ImageSource])
    /// ``OspreyOptions/retryFailed``.
    case retryFailed
    /// ``OspreyOptions/decodingOptions``.
    case decodingOptions(DecodingOptions)
    /// Sets ``DecodingOptions/thumbnail`` in ``OspreyOptions/decodingOptions``.
    case thumbnail(DecodingOptions.Thumbnail)
    /// Sets ``DecodingOptions/scaleDownLimitBytes`` (SDWebImage's default is 60 MiB).
    case scaleDownLargeImages(limitBytes: Int = DecodingOptions.defaultScaleDownLimitBytes)
    /// Sets ``DecodingOptions/firstFrameOnly``.
    case onlyLoadFirstFrame
    /// Kingfisher's name for ``DiskLookup/synchronous`` in ``OspreyOptions/diskLookup``.
    case loadDiskFileSynchronously
    /// Kingfisher's name for ``CachePolicy/revalidate`` in ``OspreyOptions/cachePolicy``.
    case refreshCached
    /// ``OspreyOptions/returnsData``.
    case returnsData
    /// ``OspreyOptions/progressiveJPEG``: previews of a progressive JPEG while it downloads.
    case progressiveJPEG(ProgressiveJPEG = .default)
    /// ``OspreyOptions/animationFramesOnDemand`` (default argument `true`): an animated GIF or
    /// WebP comes as its first frame and an ``AnimationFrameDecoder`` over its bytes.
    case animationFramesOnDemand(Bool = true)
}

extension OspreyOptions {
    /// Applies `items` in order.
    public mutating func apply(_ items: [OspreyOption]) {
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
            case .forceRefresh: cachePolicy = .reload
            case .onlyFromCache: cachePolicy = .cacheOnly
            case .fromMemoryCacheOrRefresh: cachePolicy = .memoryOrLoad
            case .cacheMemoryOnly: storage = .memory
            case .waitForCache: cacheWrites = .beforeDelivery
            case .cacheOriginalImage: originalStorage = .disk
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
            case .loadDiskFileSynchronously: diskLookup = .synchronous
            case .refreshCached: cachePolicy = .revalidate
            case .returnsData: returnsData = true
            case .progressiveJPEG(let settings): progressiveJPEG = settings
            case .animationFramesOnDemand(let on): animationFramesOnDemand = on
            }
        }
    }
}
