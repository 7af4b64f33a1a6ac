import Foundation

/// Every option of a pipeline request, resolved into one value with documented defaults: what a
/// list of ``RequestOption`` items becomes.
///
/// A pipeline holds default options (``ImagePipeline/Configuration/defaultOptions``); each call
/// passes a list of ``RequestOption`` items that override them, so per-call values win, as
/// SDWebImage's context wins over its manager's settings.
public struct ResolvedOptions: Sendable {
    /// The cache the processed image is looked up in and stored to. Default `nil`: the pipeline's cache.
    public var targetCache: ImageCache?
    /// The cache the original (unprocessed) image lives in. Default `nil`: the target cache.
    public var originalCache: ImageCache?
    /// The downloader for network sources. Default `nil`: the pipeline's downloader.
    public var downloader: ImageDownloader?
    /// The processor applied after decoding. Default ``ImageProcessors/Identity`` (identifier `""`).
    public var processor: any ImageProcessing = ImageProcessors.Identity()
    /// How images become bytes on disk. Default `nil`: the cache's serializer (original bytes when unprocessed).
    public var cacheSerializer: (any CacheSerializer)?
    /// Applied to every delivered image after the cache (the result is not cached). Default `nil`.
    public var imageModifier: (@Sendable (Image) -> Image)?
    /// How cached images are used before loading. Default ``CachePolicy/useCached``: memory, disk, then load.
    public var cachePolicy: CachePolicy = .useCached
    /// Where the processed image is stored. Default ``CacheStorage/memoryAndDisk``.
    public var storage: CacheStorage = .memoryAndDisk
    /// Whether the original bytes are stored too, so another processor can reuse them without
    /// downloading. Default ``OriginalStorage/none`` (the CLI and the server store them on disk).
    public var originalStorage: OriginalStorage = .none
    /// When the result is delivered relative to the cache writes. Default
    /// ``CacheWrites/inBackground``: at once.
    public var cacheWrites: CacheWrites = .inBackground
    /// Memory expiration for stored images. Default `nil`: the memory storage's (300 s).
    public var memoryCacheExpiration: StorageExpiration?
    /// What a memory hit does to the expiration. Default `nil`: the storage's (extend to the cache's time).
    public var memoryCacheAccessExtendingExpiration: ExpirationExtending?
    /// Disk expiration for stored bytes. Default `nil`: the disk storage's (7 days).
    public var diskCacheExpiration: StorageExpiration?
    /// What a disk hit does to the expiration. Default `nil`: the storage's.
    public var diskCacheAccessExtendingExpiration: ExpirationExtending?
    /// Where completion and progress handlers run. Default ``CallbackQueue/default``: a serial queue
    /// shared by Osprey (not the main queue: Linux processes often run none), so a request's progress
    /// reports always come before its completion; pass `.dispatch(.main)` when your program runs the
    /// main queue, or `.immediate` to be called on Osprey's own threads.
    public var callbackQueue: CallbackQueue = .default
    /// Where decoding, processing and the cache writes a request waits for run. Default `nil`: the
    /// pipeline's processing queue (see ``ImagePipeline/Configuration/processingQueue``).
    public var processingQueue: DispatchQueue?
    /// Download priority. Default ``DownloadPriority/normal``.
    public var downloadPriority: DownloadPriority = .normal
    /// Edits (or, returning `nil`, refuses) each request before it is sent. Default `nil`.
    public var requestModifier: RequestModifier?
    /// Extra request headers. Default none.
    public var requestHeaders: [String: String] = [:]
    /// Per-request basic-auth credentials. Default `nil`: the downloader's.
    public var credentials: DownloadCredentials?
    /// Transforms (e.g. decrypts) downloaded bytes; `nil` from it fails the request. Default `nil`.
    public var responseDataModifier: ResponseDataModifier?
    /// Decides on each redirect (follow, change or refuse). Default `nil`: the downloader's (follow, up to its limit).
    public var redirectHandler: RedirectHandler?
    /// Retries transport failures, 5xx and 429. Default `nil`: the downloader's (none by default).
    public var retryStrategy: (any RetryStrategy)?
    /// Sources tried in order after the main one fails (not after a cancellation). Default none.
    public var alternativeSources: [ImageSource] = []
    /// Retry URLs on the downloader's failed-URL list (a permanent failure put them there). Default `false`.
    public var retryFailed = false
    /// How downloaded and cached bytes are decoded (thumbnail, scale-down limit, first frame only…).
    /// Default ``DecodingOptions/default``.
    public var decodingOptions: DecodingOptions = .default
    /// For targets: whether the disk cache is read before `setImage` returns. Default
    /// ``DiskLookup/asynchronous``.
    public var diskLookup: DiskLookup = .asynchronous
    /// Put the original bytes in the result (``ImageResult/data``) when they are at hand. Default `false`.
    public var returnsData = false
    /// Decode previews of a progressive JPEG while it downloads and deliver them before the final
    /// image (see ``ProgressiveJPEG``). Default `nil`: off, as in Kingfisher.
    public var progressiveJPEG: ProgressiveJPEG?
    /// Deliver an animated GIF or WebP loaded from bytes as its first frame
    /// (``ImageResult/image``, full size) plus an ``AnimationFrameDecoder`` over the bytes
    /// (``ImageResult/frameDecoder``), so that a player decodes each frame when it needs it
    /// instead of holding every frame's pixels. Default `false`: every frame decoded into one
    /// image. OspreyGTK's `OspreyPicture` turns it on for its `setImage`.
    ///
    /// It applies when the bytes are decoded for the request (loaded, or read from the original's
    /// disk entry) and the request asks for nothing the frames would have to go through: no
    /// processor other than ``ImageProcessors/Downsample`` (the one a target's
    /// ``TargetSettings/sizedToTarget`` adds; the frames stay full size, libvips has no
    /// per-page shrink-on-load for GIF), no ``imageModifier``, and ``decodingOptions`` with no
    /// thumbnail, scale-down limit or ``DecodingOptions/firstFrameOnly``. Otherwise, and for a
    /// still image or a memory-cache hit, the request decodes every frame as usual. The first frame
    /// is never stored in the memory or disk cache (a later request without this option gets every
    /// frame); the original bytes are written to the disk cache under the unprocessed key, when
    /// ``storage`` includes the disk, so the next request reads them instead of downloading.
    public var animationFramesOnDemand = false

    /// Options with every default.
    public init() {}

    /// The defaults overridden by `items`, in order.
    public init(_ items: [RequestOption]) {
        self.init()
        apply(items)
    }

    /// These options overridden by `items` (later items win).
    public func merging(_ items: [RequestOption]) -> ResolvedOptions {
        var merged = self
        merged.apply(items)
        return merged
    }

    /// The cache-layer options these request options imply.
    var cacheOptions: CacheOptions {
        CacheOptions(
            memoryExpiration: memoryCacheExpiration, diskExpiration: diskCacheExpiration,
            memoryExtendingExpiration: memoryCacheAccessExtendingExpiration,
            diskExtendingExpiration: diskCacheAccessExtendingExpiration,
            storeInMemoryAfterDiskHit: true, serializer: cacheSerializer,
            decodingOptions: decodingOptions, callbackQueue: CacheOptions.globalQueue)
    }

    /// The download options these request options imply.
    func downloadOptions(validator: CacheValidator? = nil) -> DownloadOptions {
        DownloadOptions(
            priority: downloadPriority, callbackQueue: .immediate, headers: requestHeaders,
            credentials: credentials, validator: validator, requestModifier: requestModifier,
            responseDataModifier: responseDataModifier, retryFailed: retryFailed,
            redirectHandler: redirectHandler, retryStrategy: retryStrategy)
    }
}
