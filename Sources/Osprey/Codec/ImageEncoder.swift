import COspreyVips
import Foundation

/// Encodes an ``Image`` into JPEG, PNG, WebP, GIF, AVIF or JPEG XL bytes: 8-bit still JPEG and WebP with
/// libjpeg and libwebp on the calling thread (the JPEG bytes and the WebP bitstream libvips' savers
/// write, without their thread-pool hand-offs), the rest with libvips.
///
/// - Animations are kept by GIF and WebP. JPEG, PNG, AVIF and JPEG XL get the first frame only.
/// - JPEG XL at quality 100 is lossless, as WebP is.
/// - JPEG has no alpha: transparent pixels are flattened onto ``background`` (default white).
/// - Metadata (EXIF, ICC) is stripped: decoded pixels are already upright sRGB.
public struct ImageEncoder: Sendable {
    /// The output format.
    public var format: ImageFormat
    /// Quality for lossy formats, 1...100. Default 80. PNG and GIF ignore it; WebP at 100 is lossless.
    public var quality: Int
    /// The colour transparent pixels are flattened onto when the format has no alpha. Default white.
    public var background: RGBAColor
    /// Write a progressive JPEG (libvips' `interlace`: SOF2 with libjpeg's standard scan script,
    /// so that a decoder can show a coarse image from the first scans, see ``ProgressiveJPEG``)
    /// instead of a baseline one. Only JPEG reads it. Default `false`.
    public var interlace: Bool
    /// libjxl's effort for JPEG XL, 3 (fastest) ... 9 (smallest file), the range libvips 8.14
    /// takes. Only JPEG XL reads it.
    /// Default 4, imgproxy's default: libjxl's own 7 takes several times as long for a few
    /// percent smaller files.
    public var jxlEffort: Int

    /// An encoder for `format` at `quality` (default 80) flattening onto `background` (default
    /// white), progressive when `interlace` (default `false`, JPEG only), with libjxl's
    /// `jxlEffort` (default 4, JPEG XL only).
    public init(format: ImageFormat, quality: Int = 80, background: RGBAColor = .white, interlace: Bool = false, jxlEffort: Int = 4) {
        self.format = format
        self.quality = quality
        self.background = background
        self.interlace = interlace
        self.jxlEffort = jxlEffort
    }

    /// Encodes `image`.
    public func encode(_ image: Image) throws(OspreyError) -> Data {
        guard (1...100).contains(quality) else { throw .encoding(.invalidQuality(quality)) }
        guard format.canEncode else { throw .encoding(.unsupportedFormat(format)) }
        guard format != .jxl || (3...9).contains(jxlEffort) else {
            throw .encoding(.failed(format: format, message: "JPEG XL effort \(jxlEffort) is not within 3...9"))
        }
        do throws(VipsFailure) {
            let keepsFrames = format.supportsAnimation && image.isAnimated
            var pixels = image.storage
            if image.isAnimated && !keepsFrames {
                pixels = try pixels.apply { osprey_extract_area($0, 0, 0, Int32(image.width), Int32(image.height), &$1) }
            }
            if format == .jpeg && image.hasAlpha {
                let rgb = background.rgbDoubles
                pixels = try pixels.apply { input, out in rgb.withUnsafeBufferPointer { osprey_flatten(input, $0.baseAddress, 3, &out) } }
            }
            if format == .webp && !keepsFrames && pixels.height == image.height && pixels.bandFormat == VIPS_FORMAT_UCHAR
                && pixels.bands <= 4
            {
                // libwebp straight from the pixels, on this thread (see osprey_webp.h); other
                // layouts go through libvips, whose saver converts them.
                let lossless: Int32 = quality == 100 ? 1 : 0
                return try save { osprey_webpsave_still(pixels.pointer, Int32(quality), lossless, &$0, &$1) }
            }
            if format == .jpeg && !interlace && pixels.height == image.height && pixels.bandFormat == VIPS_FORMAT_UCHAR
                && (pixels.bands == 1 || pixels.bands == 3)
            {
                // libjpeg straight from the pixels, on this thread (see osprey_jpeg.h); other
                // layouts go through libvips, whose saver converts them.
                return try save { osprey_jpegsave_still(pixels.pointer, Int32(quality), &$0, &$1) }
            }
            // A private copy to carry the animation metadata the savers read.
            let annotated = try pixels.apply { osprey_copy($0, &$1) }
            if format == .webp {
                // libvips 8.14.0-8.14.1 ignore `strip` in webpsave and would write these out.
                for name in ["icc-profile-data", "exif-data", "xmp-data", "iptc-data"] {
                    vips_image_remove(annotated.pointer, name)
                }
            }
            if keepsFrames {
                vips_image_set_int(annotated.pointer, "page-height", Int32(image.height))
                vips_image_set_int(annotated.pointer, "loop", Int32(image.loopCount))
                let delays = image.frameDelays.map { Int32(clamping: $0) }
                delays.withUnsafeBufferPointer { osprey_set_int_array(annotated.pointer, "delay", $0.baseAddress, Int32($0.count)) }
            } else {
                vips_image_remove(annotated.pointer, "page-height")
            }
            return try save(annotated)
        } catch {
            throw .encoding(.failed(format: format, message: error.message))
        }
    }

    private func save(_ image: VipsImageRef) throws(VipsFailure) -> Data {
        let q = Int32(quality)
        return try save { buffer, length in
            switch format {
            case .jpeg:
                interlace
                    ? osprey_jpegsave_interlaced(image.pointer, q, &buffer, &length) : osprey_jpegsave(image.pointer, q, &buffer, &length)
            case .png: osprey_pngsave(image.pointer, 6, &buffer, &length)
            case .webp: osprey_webpsave(image.pointer, q, quality == 100 ? 1 : 0, &buffer, &length)
            case .gif: osprey_gifsave(image.pointer, &buffer, &length)
            case .avif: osprey_avifsave(image.pointer, q, &buffer, &length)
            case .jxl: osprey_jxlsave(image.pointer, q, quality == 100 ? 1 : 0, Int32(jxlEffort), &buffer, &length)
            case .heif, .tiff, .bmp, .svg, .pdf: -1
            }
        }
    }

    /// Runs a saver that g_mallocs its output and returns it as `Data`.
    private func save(_ saver: (inout UnsafeMutableRawPointer?, inout Int) -> Int32) throws(VipsFailure) -> Data {
        Vips.ensureInitialised()
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = saver(&buffer, &length)
        guard status == 0, let buffer else {
            if let buffer { g_free(buffer) }
            throw VipsFailure(message: Vips.takeError())
        }
        // libvips writes into a growing buffer (16 KiB at least, doubling), so its allocation can be
        // several times the bytes: shrink it, or a cache charging the bytes holds far more memory.
        let exact = g_realloc(buffer, gsize(max(length, 1))) ?? buffer
        return Data(bytesNoCopy: exact, count: length, deallocator: .custom { pointer, _ in g_free(pointer) })
    }
}

extension Image {
    /// Encodes the image as `format` at `quality` (1...100, default 80). See ``ImageEncoder``.
    public func encoded(as format: ImageFormat, quality: Int = 80) throws(OspreyError) -> Data {
        try ImageEncoder(format: format, quality: quality).encode(self)
    }
}
