import Foundation

/// A BlurHash: a placeholder for an image as a short base-83 string, by Wolt's published
/// algorithm (woltapp/blurhash), which many backends already store.
///
/// The string holds `componentsX` x `componentsY` DCT components of the image in linear RGB; the
/// first is the average colour. It holds no aspect ratio and no alpha (the reference encoders read
/// the RGB of every pixel, transparent or not): decode it at the original image's aspect ratio.
/// Hashes made here are those of the reference encoders given the same pixels, and hashes made
/// elsewhere decode here to the reference's pixels (see the tests' `PlaceholderVectors`).
///
/// ```swift
/// let hash = try await BlurHash.encode(image)                  // 4 x 3 components by default
/// let preview = try BlurHash(string: hash.string).image(width: 32, height: 24)
/// ```
public struct BlurHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash in its string form, e.g. `"LEHV6nWB2yk8pyo0adR*.7kCMdnj"`.
    public let string: String
    /// Components along the width, 1...9.
    public let componentsX: Int
    /// Components along the height, 1...9.
    public let componentsY: Int

    /// Components along the width when none are given: 4 (the reference's suggestion for a
    /// landscape image).
    package static let defaultComponentsX = 4
    /// Components along the height when none are given: 3.
    package static let defaultComponentsY = 3
    /// The largest input raster side: 100 pixels. ``init(image:componentsX:componentsY:)``
    /// downsamples larger images to fit (the hash is the same at any size to within rounding).
    package static let maxInputSide = 100
    /// The largest side ``image(width:height:punch:)`` renders: 2048 pixels. Render small and
    /// scale up (as ``Placeholder`` does): the hash has no detail to show at a larger size.
    package static let maxDecodedSide = 2048

    /// Reads and checks a hash string: at least 6 characters of the base-83 alphabet, exactly as
    /// many as its first character declares. Throws ``OspreyError/DecodingReason/invalidPlaceholderHash(algorithm:hash:message:)``
    /// naming the input.
    public init(string: String) throws(OspreyError) {
        func invalid(_ message: String) -> OspreyError {
            .decoding(.invalidPlaceholderHash(algorithm: "BlurHash", hash: placeholderHashExcerpt(string), message: message))
        }
        let characters = Array(string.utf8)
        guard characters.count >= 6 else { throw invalid("\(string.count) characters; a BlurHash has at least 6") }
        if let bad = characters.firstIndex(where: { Base83.value(of: $0) == nil }) {
            throw invalid("character \(bad + 1) is not in the base-83 alphabet")
        }
        let sizeFlag = Base83.decode(characters[0..<1])
        let componentsY = sizeFlag / 9 + 1
        let componentsX = sizeFlag % 9 + 1
        let expected = 4 + 2 * componentsX * componentsY
        guard characters.count == expected else {
            throw invalid("\(characters.count) characters; its \(componentsX)x\(componentsY) components need \(expected)")
        }
        self.string = string
        self.componentsX = componentsX
        self.componentsY = componentsY
    }

    /// Encodes RGBA8 pixels (row by row; alpha is ignored, as by the reference encoders), at most
    /// `maxInputSide` on each side, with `componentsX` x `componentsY` components (default 4 x 3,
    /// each 1...9). Throws ``OspreyError/ProcessingReason/invalidArgument(processor:message:)``
    /// for a bad raster or component count.
    public init(
        rgba: [UInt8], width: Int, height: Int, componentsX: Int = 4,
        componentsY: Int = 3
    ) throws(OspreyError) {
        try Self.validate(componentsX: componentsX, componentsY: componentsY)
        try PlaceholderRaster.validate(rgba: rgba, width: width, height: height, maxSide: Self.maxInputSide, algorithm: "blurhash")
        string = Self.encode(rgba: rgba, width: width, height: height, componentsX: componentsX, componentsY: componentsY)
        self.componentsX = componentsX
        self.componentsY = componentsY
    }

    /// Encodes `image` (its first frame), downsampled by libvips into 100 x 100 first when
    /// larger, with `componentsX` x `componentsY` components (default 4 x 3). Runs on the calling
    /// thread; ``encode(_:componentsX:componentsY:)`` runs elsewhere.
    public init(
        image: Image, componentsX: Int = 4, componentsY: Int = 3
    ) throws(OspreyError) {
        try Self.validate(componentsX: componentsX, componentsY: componentsY)
        let raster = try PlaceholderRaster(image: image)
        try self.init(rgba: raster.rgba, width: raster.width, height: raster.height, componentsX: componentsX, componentsY: componentsY)
    }

    /// Encodes an encoded image file, decoding only its first frame straight to at most
    /// 100 x 100 (shrink-on-load), with `componentsX` x `componentsY` components (default 4 x 3).
    public init(
        imageData: Data, componentsX: Int = 4, componentsY: Int = 3
    ) throws(OspreyError) {
        try Self.validate(componentsX: componentsX, componentsY: componentsY)
        let raster = try PlaceholderRaster(imageData: imageData)
        try self.init(rgba: raster.rgba, width: raster.width, height: raster.height, componentsX: componentsX, componentsY: componentsY)
    }

    /// ``init(image:componentsX:componentsY:)`` on a background queue, off the main thread and
    /// Swift's cooperative pool. Components default to 4 x 3.
    public static func encode(
        _ image: Image, componentsX: Int = 4, componentsY: Int = 3
    ) async throws(OspreyError) -> BlurHash {
        try await PlaceholderRaster.run { () throws(OspreyError) in
            try BlurHash(image: image, componentsX: componentsX, componentsY: componentsY)
        }
    }

    /// ``string``.
    public var description: String { string }

    /// The average colour: the hash's first component, stored exactly as sRGB (opaque).
    public var averageColor: RGBAColor {
        let value = Base83.decode(Array(string.utf8)[2..<6])
        // Four base-83 digits reach past 24 bits; the reference decoders read red as `value >> 16`.
        return RGBAColor(red: UInt8(min(255, value >> 16)), green: UInt8((value >> 8) & 255), blue: UInt8(value & 255))
    }

    /// Renders the hash at `width` x `height` (each 1...`maxDecodedSide`; default 32 x 32) as the
    /// reference decoders do. `punch` (default 1, finite and > 0) scales the varying components:
    /// above 1 the contrast rises. The image is opaque. Throws ``OspreyError/ProcessingReason/invalidArgument(processor:message:)``
    /// for a size or punch out of range.
    public func image(width: Int = 32, height: Int = 32, punch: Double = 1) throws(OspreyError) -> Image {
        guard (1...Self.maxDecodedSide).contains(width), (1...Self.maxDecodedSide).contains(height) else {
            throw .processing(
                .invalidArgument(processor: "blurhash", message: "size \(width)x\(height) must be 1...\(Self.maxDecodedSide) pixels on each side"))
        }
        guard punch.isFinite, punch > 0 else {
            throw .processing(.invalidArgument(processor: "blurhash", message: "punch \(punch) must be finite and > 0"))
        }
        return try Image(rgba: decodeRGBA(width: width, height: height, punch: punch), width: width, height: height)
    }

    /// Checks component counts: each 1...9.
    static func validate(componentsX: Int, componentsY: Int) throws(OspreyError) {
        guard (1...9).contains(componentsX), (1...9).contains(componentsY) else {
            throw .processing(.invalidArgument(processor: "blurhash", message: "components \(componentsX)x\(componentsY) must be 1...9 each"))
        }
    }
}
