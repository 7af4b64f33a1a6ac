import Foundation

/// An image file format, as recognised from magic bytes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible, Codable {
    /// JPEG (`FF D8 FF`).
    case jpeg
    /// PNG.
    case png
    /// GIF (87a or 89a), animated or still.
    case gif
    /// WebP (lossy, lossless or animated).
    case webp
    /// AVIF (AV1 in a HEIF container).
    case avif
    /// HEIF with a non-AV1 brand (HEIC and friends).
    case heif
    /// TIFF (first page), decode only.
    case tiff
    /// BMP, decode only, through libvips' ImageMagick loader when present.
    case bmp

    public var description: String { rawValue }

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        default: rawValue
        }
    }

    /// The MIME type, e.g. `image/jpeg`.
    public var mimeType: String { "image/\(rawValue)" }

    /// Whether the format can hold more than one frame (an animation or a multi-page file).
    public var supportsAnimation: Bool { self == .gif || self == .webp }

    /// Whether Osprey can encode this format with the libvips it runs on. AVIF needs libheif with
    /// an AV1 encoder; TIFF, BMP and HEIF are decode-only in Osprey.
    public var canEncode: Bool { Self.encodable.contains(self) }

    /// The formats this libvips build can encode, looked up once per process.
    private static let encodable = Set(allCases.filter(\.libvipsCanEncode))

    private var libvipsCanEncode: Bool {
        switch self {
        case .jpeg, .png, .webp: true
        case .gif: Vips.hasOperation("gifsave_buffer")
        case .avif: Vips.hasOperation("heifsave_buffer")
        case .heif, .tiff, .bmp: false
        }
    }

    /// Parses a user-given name: `jpeg`/`jpg`, `png`, `gif`, `webp`, `avif`, `heif`/`heic`, `tiff`/`tif`, `bmp`.
    public init?(name: String) {
        switch name.lowercased() {
        case "jpg", "jpeg", "jpe": self = .jpeg
        case "heic", "heif": self = .heif
        case "tif", "tiff": self = .tiff
        default:
            guard let format = ImageFormat(rawValue: name.lowercased()) else { return nil }
            self = format
        }
    }

    /// Detects the format from the first bytes of `data`; `nil` when nothing matches.
    /// File names are never consulted.
    public init?(sniffing data: Data) {
        guard let format = data.withUnsafeBytes({ ImageFormat.sniff(Array($0.prefix(32))) }) else { return nil }
        self = format
    }

    static func sniff(_ b: [UInt8]) -> ImageFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("BM".utf8)) && b.count >= 14 { return .bmp }
        // ISO base media: size(4) "ftyp" major-brand(4) minor(4) compatible brands...
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            let size = min(Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3]), b.count)
            var brands: [String] = [String(decoding: b[8..<12], as: UTF8.self)]
            var offset = 16
            while offset + 4 <= size {
                brands.append(String(decoding: b[offset..<offset + 4], as: UTF8.self))
                offset += 4
            }
            if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
            if brands.contains(where: { ["heic", "heix", "hevc", "hevx", "mif1", "msf1", "heim", "heis"].contains($0) }) {
                return .heif
            }
        }
        return nil
    }

    /// A short hex dump of the first bytes, for error messages.
    static func leadingBytes(of data: Data) -> String {
        data.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
    }
}
