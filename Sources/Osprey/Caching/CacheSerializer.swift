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
/// Storing: the original bytes, unchanged, when the image is unprocessed (empty processor
/// identifier) and the original's format is recognised; otherwise the image re-encoded in its
/// original format when Osprey can encode it, else as PNG when it has alpha and JPEG otherwise.
/// Loading: decodes with ``ImageDecoder``.
public struct DefaultCacheSerializer: CacheSerializer {
    /// The quality used when re-encoding (JPEG, WebP, AVIF). Default 90.
    public var quality: Int
    /// Store the original bytes even for processed images (when known and recognised), as
    /// Kingfisher's `preferCacheOriginalData`. Default `false`.
    public var preferOriginalData: Bool

    /// Makes a serializer; see the properties for the defaults.
    public init(quality: Int = 90, preferOriginalData: Bool = false) {
        self.quality = quality
        self.preferOriginalData = preferOriginalData
    }

    /// `original` when it is recognised and the image is unprocessed (or ``preferOriginalData``),
    /// else the image encoded as described on the type. Throws the encoder's ``OspreyError/encoding(_:)`` errors.
    public func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data {
        let originalFormat = original.flatMap { ImageFormat(sniffing: $0) }
        if let original, originalFormat != nil, processorIdentifier.isEmpty || preferOriginalData {
            return original
        }
        return try image.encoded(as: Self.format(for: image, originalFormat: originalFormat), quality: quality)
    }

    /// `data` decoded by ``ImageDecoder`` with `options`. Throws its ``OspreyError/decoding(_:)`` errors.
    public func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }

    /// The format a re-encoded image is stored in: its own (or its original data's) when encodable,
    /// else PNG with alpha, JPEG without.
    static func format(for image: Image, originalFormat: ImageFormat?) -> ImageFormat {
        if let format = image.format ?? originalFormat, format.canEncode {
            return format
        }
        return image.hasAlpha ? .png : .jpeg
    }
}
