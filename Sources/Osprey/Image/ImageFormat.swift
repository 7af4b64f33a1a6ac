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
    /// JPEG XL (a bare codestream `FF 0A` or the ISO BMFF container), through libvips' jxl module.
    case jxl
    /// SVG, decode only: rasterised by librsvg at the size the decode needs (see ``isVector``).
    case svg
    /// PDF, decode only: the first page, rasterised by poppler at the size the decode needs.
    case pdf

    public var description: String { rawValue }

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        default: rawValue
        }
    }

    /// The MIME type, e.g. `image/jpeg`, `image/svg+xml`, `application/pdf`.
    public var mimeType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        default: "image/\(rawValue)"
        }
    }

    /// Whether the format is drawn rather than stored as pixels (SVG, PDF): a decode renders it at
    /// the size it needs (a thumbnail box, or the first resize of a processor chain, larger or
    /// smaller than the declared size) instead of rendering the declared size and scaling that.
    public var isVector: Bool { self == .svg || self == .pdf }

    /// Whether the format can hold more than one frame (an animation or a multi-page file).
    public var supportsAnimation: Bool { self == .gif || self == .webp }

    /// Whether the format can hold an alpha channel (GIF: one bit of it). JPEG and BMP cannot.
    public var holdsAlpha: Bool { self != .jpeg && self != .bmp }

    /// Whether Osprey can encode this format with the libvips it runs on. AVIF needs libheif with
    /// an AV1 encoder, JPEG XL libvips' jxl module; TIFF, BMP, HEIF, SVG and PDF are decode-only
    /// in Osprey.
    public var canEncode: Bool {
        switch self {
        case .jpeg, .png, .webp: true
        case .gif: Self.gifEncodes
        case .avif: Self.avifEncodes
        case .jxl: Self.jxlEncodes
        case .heif, .tiff, .bmp, .svg, .pdf: false
        }
    }

    // Looked up once per process and format: the first AVIF (JPEG XL) query loads libvips' heif
    // (jxl) module.
    private static let gifEncodes = Vips.hasOperation("gifsave_buffer")
    private static let avifEncodes = Vips.hasOperation("heifsave_buffer")
    private static let jxlEncodes = Vips.hasOperation("jxlsave_buffer")

    /// Parses a user-given name: `jpeg`/`jpg`, `png`, `gif`, `webp`, `avif`, `heif`/`heic`, `tiff`/`tif`, `bmp`,
    /// `jxl`, `svg`, `pdf`.
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

    /// Detects the format from the first bytes of `data`; `nil` when nothing matches. An SVG is
    /// recognised by its first element, `<svg`, within the first 4 KiB (after an XML declaration,
    /// comments and a doctype). File names are never consulted.
    public init?(sniffing data: Data) {
        let found = data.withUnsafeBytes { bytes in
            ImageFormat.sniff(UnsafeRawBufferPointer(rebasing: bytes.prefix(32)))
                ?? (ImageFormat.sniffSVG(UnsafeRawBufferPointer(rebasing: bytes.prefix(4096))) ? .svg : nil)
        }
        guard let format = found else { return nil }
        self = format
    }

    /// Compares big-endian integers read in place (sniffing runs on every download: no arrays).
    static func sniff(_ b: UnsafeRawBufferPointer) -> ImageFormat? {
        /// The `count` bytes at `offset` as a big-endian integer, or `nil` past the end.
        func bytes(_ offset: Int, _ count: Int) -> UInt64? {
            guard b.count >= offset + count else { return nil }
            return b[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        if bytes(0, 3) == 0xFF_D8_FF { return .jpeg }
        if bytes(0, 8) == 0x89_50_4E_47_0D_0A_1A_0A { return .png }
        if bytes(0, 6) == 0x47_49_46_38_37_61 || bytes(0, 6) == 0x47_49_46_38_39_61 { return .gif }  // GIF87a, GIF89a
        if bytes(0, 4) == 0x52_49_46_46 && bytes(8, 4) == 0x57_45_42_50 { return .webp }  // RIFF....WEBP
        if bytes(0, 4) == 0x49_49_2A_00 || bytes(0, 4) == 0x4D_4D_00_2A { return .tiff }  // II*. or MM.*
        if bytes(0, 2) == 0x42_4D && b.count >= 14 { return .bmp }  // BM
        if bytes(0, 2) == 0xFF_0A { return .jxl }  // a bare JPEG XL codestream
        if bytes(0, 4) == 0x00_00_00_0C && bytes(4, 8) == 0x4A_58_4C_20_0D_0A_87_0A { return .jxl }  // JPEG XL's container
        if bytes(0, 5) == 0x25_50_44_46_2D { return .pdf }  // %PDF-
        // ISO base media: size(4) "ftyp" major-brand(4) minor(4) compatible brands...
        if bytes(4, 4) == 0x66_74_79_70, b.count >= 12 {
            let size = min(Int(bytes(0, 4)!), b.count)
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
