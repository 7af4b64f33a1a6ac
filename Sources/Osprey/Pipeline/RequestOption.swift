import Foundation

/// One per-call option, as Kingfisher's `KingfisherOptionsInfoItem`: callers pass a list, the
/// pipeline resolves it once over its defaults (``ImagePipeline/Configuration/defaultOptions``);
/// later items win. Each case says what it sets and the default when no item sets it.
public enum RequestOption: Sendable {
    /// The cache the processed image is looked up in and stored to. Default: the pipeline's cache.
    case targetCache(ImageCache)
    /// The cache the original (unprocessed) image lives in. Default: the target cache.
    case originalCache(ImageCache)
    /// The downloader for network sources. Default: the pipeline's downloader.
    case downloader(ImageDownloader)
    /// The processor applied after decoding. Default ``ImageProcessors/Identity`` (identifier `""`).
    case processor(any ImageProcessing)
    /// How images become bytes on disk. Default: the cache's serializer (original bytes when unprocessed).
    case cacheSerializer(any CacheSerializer)
    /// Applied to every delivered image after the cache (the result is not cached). Default: none.
    case imageModifier(@Sendable (Image) -> Image)
    /// How cached images are used before loading. Default ``CachePolicy/useCached``: memory, disk, then load.
    case cachePolicy(CachePolicy)
    /// Where the processed image is stored. Default ``CacheStorage/memoryAndDisk``.
    case storage(CacheStorage)
    /// Whether the original bytes are stored too, so another processor can reuse them without
    /// downloading. Default ``OriginalStorage/none`` (the CLI and the server store them on disk).
    case originalStorage(OriginalStorage)
    /// When the result is delivered relative to the cache writes. Default ``CacheWrites/inBackground``: at once.
    case cacheWrites(CacheWrites)
    /// Memory expiration for stored images. Default: the memory storage's (300 s).
    case memoryCacheExpiration(StorageExpiration)
    /// What a memory hit does to the expiration. Default: the storage's (extend to the cache's time).
    case memoryCacheAccessExtendingExpiration(ExpirationExtending)
    /// Disk expiration for stored bytes. Default: the disk storage's (7 days).
    case diskCacheExpiration(StorageExpiration)
    /// What a disk hit does to the expiration. Default: the storage's.
    case diskCacheAccessExtendingExpiration(ExpirationExtending)
    /// Where completion and progress handlers run. Default ``CallbackQueue/default``: a serial queue
    /// shared by Osprey (not the main queue: Linux processes often run none), so a request's progress
    /// reports always come before its completion; pass `.dispatch(.main)` when your program runs the
    /// main queue, or `.immediate` to be called on Osprey's own threads.
    case callbackQueue(CallbackQueue)
    /// Where decoding, processing and the cache writes a request waits for run. Default: the
    /// pipeline's processing queue (see ``ImagePipeline/Configuration/processingQueue``).
    case processingQueue(DispatchQueue)
    /// Download priority. Default ``DownloadPriority/normal``.
    case downloadPriority(DownloadPriority)
    /// Edits (or, returning `nil`, refuses) each request before it is sent. Default: none.
    case requestModifier(RequestModifier)
    /// Extra request headers, merged into those set before. Default: none.
    case requestHeaders([String: String])
    /// Per-request HTTP basic-auth credentials (`Authorization: Basic`). Default: none.
    case credentials(user: String, password: String)
    /// Transforms (e.g. decrypts) the downloaded body, given with the response's metadata, before
    /// it is decoded (SDWebImage's download decryptor); returning `nil` fails the request with
    /// ``OspreyError/DownloadReason/dataModifyingFailed(url:)``. It is not applied to a
    /// `304 Not Modified`. Default: none.
    case responseDataModifier(@Sendable (_ body: Data, _ response: DownloadResponse) -> Data?)
    /// Decides on each redirect (301, 302, 303, 307, 308 with a `Location`), given the proposed
    /// next request (for 303 the method becomes `GET`) and the redirect response: return it to
    /// follow (changed or not), or `nil` to refuse, which makes the `3xx` the final response (a
    /// failure unless acceptable). Default: none (redirects are followed, up to 10).
    case redirectHandler(@Sendable (_ proposed: DownloadRequest, _ response: DownloadResponse) async -> DownloadRequest?)
    /// Retries transport failures, 5xx and 429. Default: the downloader's (none by default).
    case retryStrategy(RetryStrategy)
    /// Sources tried in order after the main one fails (not after a cancellation). Default: none.
    case alternativeSources([ImageSource])
    /// Retry URLs on the downloader's failed-URL list (a permanent failure put them there). Default: off.
    case retryFailed
    /// How downloaded and cached bytes are decoded (thumbnail, scale-down limit, first frame only…).
    /// Default ``DecodingOptions/default``.
    case decodingOptions(DecodingOptions)
    /// Sets ``DecodingOptions/thumbnail`` in the decoding options.
    case thumbnail(DecodingOptions.Thumbnail)
    /// Sets ``DecodingOptions/scaleDownLimitBytes`` (SDWebImage's default is 60 MiB).
    case scaleDownLargeImages(limitBytes: Int = DecodingOptions.defaultScaleDownLimitBytes)
    /// Sets ``DecodingOptions/firstFrameOnly``.
    case onlyLoadFirstFrame
    /// For targets: whether the disk cache is read before `setImage` returns. Default
    /// ``DiskLookup/asynchronous``.
    case diskLookup(DiskLookup)
    /// Put the original bytes in the result (``ImageResult/data``) when they are at hand. Default: off.
    case returnsData
    /// Decode previews of a progressive JPEG while it downloads and deliver them before the final
    /// image (see ``ProgressiveJPEG``). Default: off, as in Kingfisher.
    case progressiveJPEG(ProgressiveJPEG = .default)
    /// Deliver an animated GIF or WebP loaded from bytes as its first frame (``ImageResult/image``,
    /// full size) plus an ``AnimationFrameDecoder`` over the bytes (``ImageResult/frameDecoder``),
    /// so that a player decodes each frame when it needs it instead of holding every frame's
    /// pixels. Default: off (every frame decoded into one image); the argument defaults to `true`.
    /// OspreyGTK's `OspreyPicture` turns it on for its `setImage`.
    ///
    /// It applies when the bytes are decoded for the request (loaded, or read from the original's
    /// disk entry) and the request asks for nothing the frames would have to go through: no
    /// processor other than `ImageProcessors.Downsample` (the one a target's
    /// ``TargetSettings/sizedToTarget`` adds; the frames stay full size, libvips has no
    /// per-page shrink-on-load for GIF), no image modifier, and decoding options with no
    /// thumbnail, scale-down limit or ``DecodingOptions/firstFrameOnly``. Otherwise, and for a
    /// still image or a memory-cache hit, the request decodes every frame as usual. The first frame
    /// is never stored in the memory or disk cache (a later request without this option gets every
    /// frame); the original bytes are written to the disk cache under the unprocessed key, when
    /// the storage includes the disk, so the next request reads them instead of downloading.
    case animationFramesOnDemand(Bool = true)
    /// A smaller source loaded instead of the requested one while the network is metered or the
    /// system saves power (``ImagePipeline/handleNetworkChange(available:metered:)``,
    /// ``ImagePipeline/handlePowerSaver(_:)``), as Kingfisher's `lowDataMode`; the result's
    /// ``ImageResult/source`` is then this source. Default: none (the requested source always).
    case lowDataSource(ImageSource)
}
