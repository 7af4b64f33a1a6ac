/// How ``ImageDecoder`` turns bytes into an ``Image``, modelled on SDWebImage's decode options and
/// Kingfisher's downsampling.
///
/// Defaults: no thumbnail, no scale-down limit, all frames, auto-orientation on, and a maximum
/// source resolution of 50 megapixels summed over frames.
public struct DecodingOptions: Sendable, Hashable {
    /// Decode straight to a smaller size using libvips' shrink-on-load, the Linux counterpart of
    /// `CGImageSourceCreateThumbnailAtIndex`. The full-size image is never held in memory.
    public struct Thumbnail: Sendable, Hashable {
        /// The largest width of the result, in pixels.
        public var width: Int
        /// The largest height of the result, in pixels.
        public var height: Int
        /// `true` (default): fit inside `width` x `height` keeping the aspect ratio, never upscaling.
        /// `false`: produce exactly `width` x `height`, stretching.
        public var preserveAspectRatio: Bool

        /// A thumbnail box of `width` x `height`; `preserveAspectRatio` defaults to `true`.
        public init(width: Int, height: Int, preserveAspectRatio: Bool = true) {
            self.width = width
            self.height = height
            self.preserveAspectRatio = preserveAspectRatio
        }

        /// A square box: the longer side becomes at most `maxPixelSize`.
        public init(maxPixelSize: Int, preserveAspectRatio: Bool = true) {
            self.init(width: maxPixelSize, height: maxPixelSize, preserveAspectRatio: preserveAspectRatio)
        }
    }

    /// SDWebImage's default scale-down limit: 60 MiB of decoded RGBA pixels.
    public static let defaultScaleDownLimitBytes = 60 * 1024 * 1024
    /// The default maximum source resolution: 50 megapixels, summed over frames.
    public static let defaultMaxSourcePixels = 50_000_000

    /// Thumbnail-on-decode. Default `nil`: decode at full size.
    public var thumbnail: Thumbnail?
    /// Scale-down-large-images: when the decoded RGBA pixels of a frame would exceed this many
    /// bytes (divided among frames for animations), decode at the largest size under the limit,
    /// keeping the aspect ratio. Default `nil`: no limit. ``defaultScaleDownLimitBytes`` is 60 MiB.
    public var scaleDownLimitBytes: Int?
    /// Decode only the first frame of an animation. Default `false`: keep every frame.
    public var firstFrameOnly: Bool
    /// Apply the EXIF orientation so the pixels are upright. Default `true`.
    public var autoOrient: Bool
    /// The largest source, in pixels summed over the frames to decode, that is decoded at all.
    /// Checked from the header before any pixel is decoded, so a bomb (a small file that declares
    /// huge dimensions) is refused cheaply with ``OspreyError/DecodingReason/tooLarge(width:height:frames:limitPixels:)``.
    /// Default ``defaultMaxSourcePixels`` (50 megapixels).
    public var maxSourcePixels: Int

    /// Options with every default; pass values to override.
    public init(
        thumbnail: Thumbnail? = nil, scaleDownLimitBytes: Int? = nil, firstFrameOnly: Bool = false,
        autoOrient: Bool = true, maxSourcePixels: Int = DecodingOptions.defaultMaxSourcePixels
    ) {
        self.thumbnail = thumbnail
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.firstFrameOnly = firstFrameOnly
        self.autoOrient = autoOrient
        self.maxSourcePixels = maxSourcePixels
    }

    /// The defaults: full size, all frames, auto-orient, 50-megapixel limit.
    public static let `default` = DecodingOptions()
}

extension DecodingOptions {
    /// A short string naming these options, for keys of shared pipeline work: empty for the
    /// defaults (no reflection, unlike `String(describing:)`).
    var workKey: String {
        if self == .default { return "" }
        let thumb = thumbnail.map { "\($0.width)x\($0.height)\($0.preserveAspectRatio ? "a" : "f")" } ?? "-"
        return "t\(thumb),s\(scaleDownLimitBytes ?? -1),f\(firstFrameOnly ? 1 : 0),o\(autoOrient ? 1 : 0),m\(maxSourcePixels)"
    }
}

extension DecodingOptions {
    /// The decompression-bomb guard: refuses a source whose header declares more than
    /// ``maxSourcePixels`` pixels over the frames to decode, before any pixel is decoded.
    package func checkSourcePixels(width: Int, height: Int, frames: Int) throws(OspreyError) {
        let (area, overflow) = width.multipliedReportingOverflow(by: height)
        let (pixels, overflow2) = area.multipliedReportingOverflow(by: frames)
        guard !overflow, !overflow2, pixels <= maxSourcePixels else {
            throw .decoding(.tooLarge(width: width, height: height, frames: frames, limitPixels: maxSourcePixels))
        }
    }
}
