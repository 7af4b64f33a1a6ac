import Foundation

/// Turns images into the bytes a disk cache stores, and back.
public protocol CacheSerializer: Sendable {
    /// The bytes to store for `image`. `original` is the data the image was decoded from, when known;
    /// `processorIdentifier` is empty when the image is unprocessed.
    func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data
    /// The image stored as `data`.
    func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image
}

/// The default ``CacheSerializer``.
///
/// Storing gives back what was given: a cache hit has the pixels, alpha, frames and ``Image/format``
/// of the image that was stored.
/// - Unprocessed (empty processor identifier) with recognised original bytes: those bytes, unchanged.
/// - Otherwise, when ``preferredFormat`` is set and holds the image (alpha, frames), the image in
///   that format at ``quality`` (Kingfisher's `FormatIndicatedCacheSerializer`, made safe).
/// - Otherwise the image encoded in its ``Image/format`` when Osprey can encode it. Processors keep
///   that format only while it holds their output (a JPEG that gains alpha becomes a PNG), and
///   animations only come from formats that animate, so alpha and frames are never dropped. Lossy
///   formats (JPEG, WebP, AVIF) are stored at ``quality``: the original was lossy too.
/// - Otherwise (an image made from pixels, or a format Osprey only decodes: TIFF, BMP, HEIF):
///   PNG, lossless, or lossless WebP for an animation.
/// Loading: decodes with ``ImageDecoder``.
public struct DefaultCacheSerializer: CacheSerializer {
    /// The quality used when re-encoding (JPEG, WebP, AVIF). Default 90.
    public var quality: Int
    /// Store the original bytes even for processed images (when known and recognised), as
    /// Kingfisher's `preferCacheOriginalData`. Default `false`.
    public var preferOriginalData: Bool
    /// The format processed images are stored in when it holds them (alpha, animation frames) and
    /// Osprey can encode it, e.g. the output format a caller will encode to anyway. Default `nil`:
    /// the image's own format.
    public var preferredFormat: ImageFormat?

    /// Makes a serializer; see the properties for the defaults.
    public init(quality: Int = 90, preferOriginalData: Bool = false, preferredFormat: ImageFormat? = nil) {
        self.quality = quality
        self.preferOriginalData = preferOriginalData
        self.preferredFormat = preferredFormat
    }

    /// `original` when it is recognised and the image is unprocessed (or ``preferOriginalData``),
    /// else the image encoded as described on the type. Throws the encoder's ``OspreyError/encoding(_:)`` errors.
    public func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data {
        let originalFormat = original.flatMap { ImageFormat(sniffing: $0) }
        if let original, originalFormat != nil, processorIdentifier.isEmpty || preferOriginalData {
            return original
        }
        let format = preferredFormat.flatMap { $0.holds(image) ? $0 : nil } ?? Self.format(for: image, originalFormat: originalFormat)
        // WebP chosen for an animation from a lossless source is stored lossless (quality 100).
        let lossless = format == .webp && image.format != .webp
        return try image.encoded(as: format, quality: lossless ? 100 : quality)
    }

    /// `data` decoded by ``ImageDecoder`` with `options`. Throws its ``OspreyError/decoding(_:)`` errors.
    public func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }

    /// The format a re-encoded image is stored in: its own (or its original data's) when encodable
    /// and able to hold it, else PNG, or WebP for an animation.
    static func format(for image: Image, originalFormat: ImageFormat?) -> ImageFormat {
        if let format = image.format ?? originalFormat, format.holds(image) {
            return format
        }
        return image.isAnimated ? .webp : .png
    }
}

extension ImageFormat {
    /// Whether Osprey can encode `image` in this format keeping its alpha and its frames.
    func holds(_ image: Image) -> Bool {
        canEncode && (!image.hasAlpha || holdsAlpha) && (!image.isAnimated || supportsAnimation)
    }
}
