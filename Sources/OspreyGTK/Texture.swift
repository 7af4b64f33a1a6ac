import CGtk
import Osprey

/// A `GdkTexture` made from an ``Osprey/Image`` without copying its pixels: a `GdkMemoryTexture`
/// over `GBytes` that keep the image's pixel buffer alive (``Osprey/Image/pixelBuffer(frame:)``).
/// Made off the main actor for loaded images (textures are immutable, so any thread may hold one).
public final class Texture: @unchecked Sendable {
    // @unchecked: a GdkTexture is immutable after creation and its reference count is atomic, so
    // passing it between threads and releasing it from any thread is safe; GTK draws it on the
    // main thread only.
    /// The texture (a `GdkTexture *`), owned by this object.
    public let pointer: OpaquePointer
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The animated image this texture is the first frame of (``OspreyPicture`` plays it), `nil`
    /// for a still image or another frame.
    public let animation: Image?

    /// The decoder of the animation whose first frame this texture is, when its frames are
    /// decoded on demand (``init(decoding:)``; ``OspreyPicture`` plays it), else `nil`.
    public let frameDecoder: AnimationFrameDecoder?

    /// Wraps frame `frame` (default 0) of `image`; `nil` when the frame does not exist. Frame 0 of
    /// an animated image keeps the image in ``animation``. Images
    /// whose pixels cannot be shared (grey) are converted to RGBA in a new buffer instead.
    public convenience init?(image: Image, frame: Int = 0) {
        self.init(image: image, frame: frame, frameDecoder: nil)
    }

    /// The first frame of `decoder`'s animation, keeping the decoder in ``frameDecoder``: an
    /// ``OspreyPicture`` that displays it plays the animation with each frame decoded as playback
    /// reaches it, so the decoded pixels held stay within ``AnimationSettings``' buffer. Decodes
    /// frame 0: call it off the main thread. `nil` when frame 0 cannot be decoded.
    public convenience init?(decoding decoder: AnimationFrameDecoder) {
        guard let first = try? decoder.frame(at: 0) else { return nil }
        self.init(image: first, frame: 0, frameDecoder: decoder)
    }

    /// `first`, the first frame of `decoder`'s animation already decoded (as a pipeline's
    /// ``Osprey/ImageResult/image`` with ``Osprey/ImageResult/frameDecoder``), keeping the decoder in
    /// ``frameDecoder`` as ``init(decoding:)`` does, without decoding it again. `nil` when its
    /// pixels cannot be wrapped.
    public convenience init?(firstFrame first: Image, of decoder: AnimationFrameDecoder) {
        self.init(image: first, frame: 0, frameDecoder: decoder)
    }

    private init?(image: Image, frame: Int, frameDecoder: AnimationFrameDecoder?) {
        if let buffer = image.pixelBuffer(frame: frame) {
            let owner = Unmanaged.passRetained(buffer.owner).toOpaque()
            let bytes = g_bytes_new_with_free_func(
                buffer.base, gsize(buffer.count), { owner in Unmanaged<AnyObject>.fromOpaque(owner!).release() }, owner)
            let format = buffer.bands == 4 ? GDK_MEMORY_R8G8B8A8 : GDK_MEMORY_R8G8B8
            pointer = gdk_memory_texture_new(Int32(buffer.width), Int32(buffer.height), format, bytes, gsize(buffer.rowBytes))
            g_bytes_unref(bytes)
        } else {
            guard let still = image.frame(at: frame), let pixels = try? still.rgbaPixels() else { return nil }
            let bytes = pixels.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
            pointer = gdk_memory_texture_new(Int32(still.width), Int32(still.height), GDK_MEMORY_R8G8B8A8, bytes, gsize(still.width * 4))
            g_bytes_unref(bytes)
        }
        width = image.width
        height = image.height
        animation = frame == 0 && image.isAnimated ? image : nil
        self.frameDecoder = frameDecoder
    }

    /// Takes ownership of `texture` (a `GdkTexture *` whose reference this object now holds).
    public init(taking texture: OpaquePointer) {
        pointer = texture
        width = Int(gdk_texture_get_width(texture))
        height = Int(gdk_texture_get_height(texture))
        animation = nil
        frameDecoder = nil
    }

    /// The texture as a `GdkPaintable *`, to hand to GTK.
    public var paintable: OpaquePointer { pointer }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }
}
