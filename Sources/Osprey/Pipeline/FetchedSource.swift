import Foundation

/// The source of a miss as the fetch stage found it: the original image in the original cache's
/// memory, or the original bytes (from its disk, or loaded).
struct FetchedSource: Sendable {
    /// The decoded original, when it came from the memory cache.
    var image: Image?
    /// The original bytes, when they were read or downloaded.
    var data: Data?
    /// Where it came from: ``CacheType/none`` when loaded, else the original cache's level.
    var cacheType: CacheType
    /// The validators of the response, for ``CachePolicy/revalidate``.
    var validator: CacheValidator?
    /// The decodes of `data` by decode plan (`nil`: in full), shared by every request that
    /// fetched it, each kept once made (`nil` without bytes).
    var decodes: JobRegistry<DecodePlan?, ProcessedImage>?

    init(image: Image?, data: Data?, cacheType: CacheType, validator: CacheValidator?) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.validator = validator
        decodes = image == nil && data != nil ? JobRegistry(keepsFinished: true) : nil
    }
}

/// An image after some of a request's processors, with how its bytes were decoded (`nil` when
/// nothing was decoded for it: the original came from the memory cache).
struct ProcessedImage: Sendable {
    var image: Image
    var decoded: DecodeInfo?
}

/// What the last stage hands to each request.
struct DeliveredImage: Sendable {
    var image: Image
    var data: Data?
    var cacheType: CacheType
    var decoded: DecodeInfo?
    /// The animation's decoder when `image` is its first frame alone (``OspreyOptions/animationFramesOnDemand``).
    var frames: AnimationFrameDecoder?
}
