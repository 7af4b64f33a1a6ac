import Foundation

/// A ThumbHash: a placeholder for an image in 5 to 25 bytes, by Evan Wallace's published
/// algorithm (evanw/thumbhash), with its colours, its alpha and its approximate aspect ratio.
///
/// Hashes made here are byte for byte those of the reference encoder given the same RGBA pixels,
/// and hashes made elsewhere decode here to the reference's pixels (see the tests'
/// `PlaceholderVectors`). The usual string form is the bytes in standard base64 (``string``).
///
/// ```swift
/// let hash = try await ThumbHash.encode(image)        // downsampled first, off the caller's thread
/// let text = hash.string                              // e.g. "3OcRJYB4d3h/iIeHeEh3eIhw+j2w"
/// let preview = try ThumbHash(string: text).image()   // at most 32 x 32, aspect ratio kept
/// ```
public struct ThumbHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash, as the reference implementations write and read it.
    public let bytes: [UInt8]

    /// The largest side of an input raster: 100 pixels (the reference's limit). ``init(image:)``
    /// downsamples larger images to fit.
    package static let maxInputSide = 100
    /// The largest side of a decoded hash: 32 pixels, as the reference renders it.
    package static let decodedMaxSide = 32

    /// Reads a hash from its bytes. Throws ``OspreyError/DecodingReason/invalidPlaceholderHash(algorithm:hash:message:)``
    /// when the bytes are too few for what their header declares. Bytes past the last coefficient
    /// are kept and ignored, as the reference decoders do.
    public init(bytes: [UInt8]) throws(OspreyError) {
        if let problem = Self.layoutProblem(bytes) {
            throw .decoding(.invalidPlaceholderHash(algorithm: "ThumbHash", hash: Data(bytes).base64EncodedString(), message: problem))
        }
        self.bytes = bytes
    }

    /// Reads a hash from its string form: base64 in the standard or the URL-safe alphabet,
    /// padding optional, surrounding whitespace ignored. Throws
    /// ``OspreyError/DecodingReason/invalidPlaceholderHash(algorithm:hash:message:)`` naming the input.
    public init(string: String) throws(OspreyError) {
        var text = string.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if text.count % 4 != 0 { text += String(repeating: "=", count: 4 - text.count % 4) }
        guard !text.isEmpty, let data = Data(base64Encoded: text) else {
            throw .decoding(.invalidPlaceholderHash(algorithm: "ThumbHash", hash: placeholderHashExcerpt(string), message: "not base64"))
        }
        if let problem = Self.layoutProblem([UInt8](data)) {
            throw .decoding(.invalidPlaceholderHash(algorithm: "ThumbHash", hash: placeholderHashExcerpt(string), message: problem))
        }
        bytes = [UInt8](data)
    }

    /// Encodes RGBA8 pixels (row by row, alpha not premultiplied), at most `maxInputSide` on each
    /// side, exactly as the reference's `rgbaToThumbHash`. Throws ``OspreyError/ProcessingReason/invalidArgument(processor:message:)``
    /// for a raster larger than 100 x 100 or a byte count that is not `width * height * 4`.
    public init(rgba: [UInt8], width: Int, height: Int) throws(OspreyError) {
        try PlaceholderRaster.validate(rgba: rgba, width: width, height: height, maxSide: Self.maxInputSide, algorithm: "thumbhash")
        bytes = Self.encode(rgba: rgba, width: width, height: height)
    }

    /// Encodes `image` (its first frame), downsampled by libvips into 100 x 100 first when larger.
    /// Runs on the calling thread; ``encode(_:)`` runs elsewhere.
    public init(image: Image) throws(OspreyError) {
        let raster = try PlaceholderRaster(image: image)
        bytes = Self.encode(rgba: raster.rgba, width: raster.width, height: raster.height)
    }

    /// Encodes an encoded image file (any format the decoder reads), decoding only its first
    /// frame straight to at most 100 x 100 (shrink-on-load): the cheap way from bytes to a hash.
    /// Decoding errors are ``OspreyError/decoding(_:)`` as for ``ImageDecoder``.
    public init(imageData: Data) throws(OspreyError) {
        let raster = try PlaceholderRaster(imageData: imageData)
        bytes = Self.encode(rgba: raster.rgba, width: raster.width, height: raster.height)
    }

    /// ``init(image:)`` on a background queue, off the main thread and Swift's cooperative pool.
    public static func encode(_ image: Image) async throws(OspreyError) -> ThumbHash {
        try await PlaceholderRaster.run { () throws(OspreyError) in try ThumbHash(image: image) }
    }

    /// The usual string form: the bytes in standard base64 with padding.
    public var string: String { Data(bytes).base64EncodedString() }

    /// ``string``.
    public var description: String { string }

    /// Whether the hash carries an alpha channel (the image had transparent pixels).
    public var hasAlpha: Bool { bytes[2] & 0x80 != 0 }

    /// The approximate aspect ratio (width / height) of the hashed image, from its header, as the
    /// reference's `thumbHashToApproximateAspectRatio`: coarse (ratios of small integers such as 7/5).
    package var approximateAspectRatio: Double {
        let lMax = hasAlpha ? 5.0 : 7.0
        let minor = Double(bytes[3] & 7)
        return bytes[4] & 0x80 != 0 ? lMax / minor : minor / lMax
    }

    /// The size ``image()`` has: 32 pixels on the longer side, the other from
    /// `approximateAspectRatio`.
    package var decodedSize: (width: Int, height: Int) {
        let ratio = approximateAspectRatio
        let width = Self.jsRound(ratio > 1 ? 32 : 32 * ratio)
        let height = Self.jsRound(ratio > 1 ? 32 / ratio : 32)
        return (Int(width), Int(height))
    }

    /// The average colour, as the reference's `thumbHashToAverageRGBA` (each channel 0...1),
    /// rounded to 8 bits per channel.
    public var averageColor: RGBAColor {
        let (r, g, b, a) = averageRGBA
        func byte(_ value: Double) -> UInt8 { UInt8(Self.jsRound(value * 255)) }
        return RGBAColor(red: byte(r), green: byte(g), blue: byte(b), alpha: byte(a))
    }

    /// The average colour with each channel in 0...1, RGB not premultiplied by alpha.
    var averageRGBA: (Double, Double, Double, Double) {
        let header = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
        let l = Double(header & 63) / 63
        let p = Double((header >> 6) & 63) / 31.5 - 1
        let q = Double((header >> 12) & 63) / 31.5 - 1
        let a = hasAlpha ? Double(bytes[5] & 15) / 15 : 1
        let b = l - 2.0 / 3.0 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        return (max(0, min(1, r)), max(0, min(1, g)), max(0, min(1, b)), a)
    }

    /// Renders the hash as the reference's `thumbHashToRGBA` does: at most 32 pixels on the longer
    /// side (`decodedSize`), RGBA (opaque when the hash has no alpha).
    public func image() throws(OspreyError) -> Image {
        let (width, height, pixels) = decodeRGBA()
        return try Image(rgba: pixels, width: width, height: height)
    }

    /// Why `bytes` cannot be a ThumbHash, or `nil`: at least 5 bytes, a non-zero luminance count
    /// (the aspect ratio), and every coefficient its header declares present.
    static func layoutProblem(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 5 else { return "\(bytes.count) bytes; a ThumbHash has at least 5" }
        let hasAlpha = bytes[2] & 0x80 != 0
        let isLandscape = bytes[4] & 0x80 != 0
        let minor = Int(bytes[3] & 7)
        guard minor > 0 else { return "its header declares a zero aspect ratio (no luminance components)" }
        let lMax = hasAlpha ? 5 : 7
        let lx = max(3, isLandscape ? lMax : minor)
        let ly = max(3, isLandscape ? minor : lMax)
        let coefficients = acCount(lx, ly) + 2 * acCount(3, 3) + (hasAlpha ? acCount(5, 5) : 0)
        let needed = (hasAlpha ? 6 : 5) + (coefficients + 1) / 2
        guard bytes.count >= needed else { return "\(bytes.count) bytes; its header declares \(needed)" }
        return nil
    }

    /// How many AC coefficients a `nx` x `ny` channel has (the reference's triangular layout).
    static func acCount(_ nx: Int, _ ny: Int) -> Int {
        var count = 0
        for cy in 0..<ny {
            var cx = cy > 0 ? 0 : 1
            while cx * ny < nx * (ny - cy) {
                count += 1
                cx += 1
            }
        }
        return count
    }

    /// JavaScript's `Math.round`: to the nearest integer, halves towards +infinity. The reference
    /// is JavaScript; Swift's `rounded()` differs at negative halves and Python's `round` at even ones.
    static func jsRound(_ value: Double) -> Double {
        let floor = value.rounded(.down)
        return value - floor >= 0.5 ? floor + 1 : floor
    }
}
