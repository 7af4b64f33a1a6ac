import Foundation

/// What a pipeline request delivers (Kingfisher's `RetrieveImageResult`).
public struct ImageResult: Sendable {
    /// The image, processed and passed through the image modifier.
    public var image: Image
    /// Where it came from: ``CacheType/memory`` or ``CacheType/disk`` for a cache hit (also when an
    /// original found in a cache was processed), ``CacheType/none`` when it was loaded.
    public var cacheType: CacheType
    /// The source that produced the image (an alternative source when the main one failed).
    public var source: ImageSource
    /// The source the request was made for.
    public var originalSource: ImageSource {
        get { requestedSource ?? source }
        set { requestedSource = newValue }
    }
    /// `originalSource` when it was set apart from `source` (`nil`: the same), so a result built on
    /// a cache hit copies its source once.
    private var requestedSource: ImageSource?
    /// The original bytes, when ``RequestOption/returnsData`` is set and they were at hand.
    public var data: Data?
    /// `true` for the second result of ``CachePolicy/revalidate``: the server had a new image.
    public var isRefresh: Bool
    /// How the original bytes were decoded for this result; `nil` (the default) when none were:
    /// a cache hit of the processed image, or an original found decoded in the memory cache.
    package var decoded: DecodeInfo?
    /// For a progressive preview (``ProgressiveJPEG``): what it was made from. `nil` (the
    /// default) for the final image and every cached one.
    public var preview: PreviewInfo?
    /// Whether this is a progressive preview delivered before the final image (``preview`` is
    /// set): never cached, always ``CacheType/none``.
    public var isPreview: Bool { preview != nil }
    /// For an animation delivered with ``RequestOption/animationFramesOnDemand(_:)``: the decoder of
    /// its frames over the kept bytes, ``image`` being its first frame alone (full size, not
    /// cached). `nil` (the default) when ``image`` holds every frame, or is a still image.
    public var frameDecoder: AnimationFrameDecoder?

    /// A result; `data` defaults to `nil`, `isRefresh` to `false`, ``preview`` and
    /// ``frameDecoder`` to `nil`.
    public init(
        image: Image, cacheType: CacheType, source: ImageSource, originalSource: ImageSource,
        data: Data? = nil, isRefresh: Bool = false
    ) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        self.requestedSource = originalSource
        self.data = data
        self.isRefresh = isRefresh
    }

    /// A result whose `originalSource` is `source`.
    init(image: Image, cacheType: CacheType, source: ImageSource, data: Data? = nil) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        self.requestedSource = nil
        self.data = data
        self.isRefresh = false
    }
}

/// How a pipeline request decoded the original bytes (``ImageResult/decoded``).
package struct DecodeInfo: Sendable, Hashable {
    /// Width of the decoded image, in pixels.
    package var width: Int
    /// Height of one decoded frame, in pixels.
    package var height: Int
    /// `true` when the first processor (a resize or downsample that shrinks the source) was folded
    /// into the decode with libvips shrink-on-load, so the full-size pixels were never held.
    package var shrunkOnLoad: Bool

    /// A decode of `width` x `height`, folded or not.
    package init(width: Int, height: Int, shrunkOnLoad: Bool) {
        self.width = width
        self.height = height
        self.shrunkOnLoad = shrunkOnLoad
    }
}
