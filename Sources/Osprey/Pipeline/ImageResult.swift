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
        get { box?.details.requestedSource ?? source }
        set { details.requestedSource = newValue }
    }
    /// The original bytes, when ``RequestOption/returnsData`` is set and they were at hand; `nil` by default.
    public var data: Data? {
        get { box?.details.data }
        set { details.data = newValue }
    }
    /// `true` for the second result of ``CachePolicy/revalidate``: the server had a new image
    /// (default `false`).
    public var isRefresh: Bool {
        get { box?.details.isRefresh ?? false }
        set { details.isRefresh = newValue }
    }
    /// How the original bytes were decoded for this result; `nil` (the default) when none were:
    /// a cache hit of the processed image, or an original found decoded in the memory cache.
    /// (Stored inline: it has no references, and most loaded results carry it.)
    package var decoded: DecodeInfo?
    /// For a progressive preview (``ProgressiveJPEG``): what it was made from. `nil` (the
    /// default) for the final image and every cached one.
    public var preview: PreviewInfo? {
        get { box?.details.preview }
        set { details.preview = newValue }
    }
    /// Whether this is a progressive preview delivered before the final image (``preview`` is
    /// set): never cached, always ``CacheType/none``.
    public var isPreview: Bool { preview != nil }
    /// For an animation delivered with ``RequestOption/animationFramesOnDemand(_:)``: the decoder of
    /// its frames over the kept bytes, ``image`` being its first frame alone (full size, not
    /// cached). `nil` (the default) when ``image`` holds every frame, or is a still image.
    public var frameDecoder: AnimationFrameDecoder? {
        get { box?.details.frameDecoder }
        set { details.frameDecoder = newValue }
    }

    /// The fields a memory hit leaves at their defaults, in one immutable box (`nil`: all defaults),
    /// so that a result is a few words: a hit's result is moved several times on its way to an
    /// `await` (inline, these fields made it about 150 bytes, each move a `memcpy`).
    private var box: Box?
    /// The boxed fields as a value, for the setters (each makes a new box).
    private var details: Details {
        get { box?.details ?? Details() }
        set { box = Box(details: newValue) }
    }

    private struct Details: Sendable {
        /// `originalSource` when it was set apart from `source` (`nil`: the same).
        var requestedSource: ImageSource?
        var data: Data?
        var isRefresh = false
        var preview: PreviewInfo?
        var frameDecoder: AnimationFrameDecoder?
    }

    private final class Box: Sendable {
        let details: Details
        init(details: Details) { self.details = details }
    }

    /// A result; `data` defaults to `nil`, `isRefresh` to `false`, ``preview`` and
    /// ``frameDecoder`` to `nil`.
    public init(
        image: Image, cacheType: CacheType, source: ImageSource, originalSource: ImageSource,
        data: Data? = nil, isRefresh: Bool = false
    ) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        box = Box(details: Details(requestedSource: originalSource, data: data, isRefresh: isRefresh))
    }

    /// A result whose `originalSource` is `source` (the rest as in the public initialiser; boxed
    /// only when one of them is set).
    init(
        image: Image, cacheType: CacheType, source: ImageSource, data: Data? = nil, decoded: DecodeInfo? = nil,
        frameDecoder: AnimationFrameDecoder? = nil
    ) {
        self.image = image
        self.cacheType = cacheType
        self.source = source
        self.decoded = decoded
        if data != nil || frameDecoder != nil { box = Box(details: Details(data: data, frameDecoder: frameDecoder)) }
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
