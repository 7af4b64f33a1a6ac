import COspreyVips
import Foundation

/// Rendering a vector source (an SVG, a PDF's first page) at the size its decode needs.
///
/// A vector has no pixel size of its own: its declared size (an SVG's `width`/`height` or
/// `viewBox`, a PDF page's size in points, both at 72 dpi) is only where the scale starts. So the
/// decode renders it at the scale the target needs, larger or smaller than the declared size,
/// and never scales a small rendering up:
/// - a ``DecodingOptions/thumbnail`` box: fitted into the box (drawn to cover it, then stretched
///   to it, when it does not preserve the aspect ratio), up or down;
/// - the first step of a processor chain (``DecodePlan``): a fit, a downsample (for a vector, the
///   box is the size wanted) or a fill's or stretch's cover of the box; the step then runs on the
///   rendering (an exact fit leaves it as it is, a fill crops it, a stretch squeezes one axis);
/// - otherwise the declared size.
///
/// ``DecodingOptions/scaleDownLimitBytes`` caps the scale, and the rendered size is checked
/// against ``DecodingOptions/maxSourcePixels`` before anything is drawn, so a huge canvas is
/// refused as a bomb is, with ``OspreyError/DecodingReason/tooLarge(width:height:frames:limitPixels:)``.
extension ImageDecoder {
    /// Renders `buffer` (format `format`, a vector) for `options` and `plan`.
    static func renderVector(
        _ buffer: UnsafeRawBufferPointer, format: ImageFormat, options: DecodingOptions, plan: DecodePlan?
    ) throws(OspreyError) -> Image {
        let header = try loadHeader(buffer, format: format, allFrames: false).header
        let scale = vectorScale(width: header.width, height: header.height, options: options, plan: plan)
        var width = max(1, Int((Double(header.width) * scale).rounded()))
        var height = max(1, Int((Double(header.height) * scale).rounded()))
        try options.checkSourcePixels(width: width, height: height, frames: 1)
        if let thumbnail = options.thumbnail, !thumbnail.preserveAspectRatio { (width, height) = (thumbnail.width, thumbnail.height) }
        do throws(VipsFailure) {
            // libvips' loaders take scales within 0.001...100000 (and ignore others): a drawing
            // wanted smaller than a thousandth of its declared size is drawn at that and resized.
            let loaderScale = min(max(scale, 0.001), 100_000)
            var rendered = try VipsImageRef.make { out in vectorLoad(buffer, format: format, scale: loaderScale, sequential: true, out: &out) }
            // Resized only when drawn at another scale or stretched: otherwise the loader's own
            // rounding of the exact size (a 67.5 pt page) stands.
            let stretched = options.thumbnail.map { !$0.preserveAspectRatio } ?? false
            if loaderScale != scale || stretched, rendered.width != width || rendered.height != height {
                rendered = try rendered.apply {
                    osprey_thumbnail_image(
                        $0, Int32(width), Int32(height), Int32(VIPS_SIZE_FORCE.rawValue), Int32(VIPS_INTERESTING_NONE.rawValue), &$1)
                }
            }
            let pixels = try rendered.normalisedToSRGB().materialised()
            return Image(storage: pixels, frameHeight: pixels.height, format: format, frameDelays: [], loopCount: 0, orientation: .up)
        } catch {
            throw classify(error, format: format)
        }
    }

    /// The scale from the declared `width` x `height` to the rendering (see the extension's notes).
    static func vectorScale(width: Int, height: Int, options: DecodingOptions, plan: DecodePlan?) -> Double {
        guard width > 0, height > 0 else { return 1 }
        let (w, h) = (Double(width), Double(height))
        var scale = 1.0
        if let thumbnail = options.thumbnail {
            let (x, y) = (Double(thumbnail.width) / w, Double(thumbnail.height) / h)
            scale = thumbnail.preserveAspectRatio ? min(x, y) : max(x, y)
        } else if let plan {
            let (x, y) = (Double(plan.width) / w, Double(plan.height) / h)
            switch plan.fit {
            case .fit, .downsample: scale = min(x, y)
            case .fill, .stretch: scale = max(x, y)
            }
        }
        if let limit = options.scaleDownLimitBytes, limit > 0 {
            scale = min(scale, (Double(limit) / 4 / (w * h)).squareRoot())
        }
        return scale
    }

    /// Opens `buffer` with the format's loader at `scale` (1: the declared size). The loader is
    /// named, never guessed from the bytes: with libvips' ImageMagick module loaded, a guess could
    /// hand an SVG to ImageMagick's own renderer.
    static func vectorLoad(
        _ buffer: UnsafeRawBufferPointer, format: ImageFormat, scale: Double, sequential: Bool, out: inout UnsafeMutablePointer<VipsImage>?
    ) -> Int32 {
        switch format {
        case .svg: osprey_svgload(buffer.baseAddress, buffer.count, scale, sequential ? 1 : 0, &out)
        default: osprey_pdfload(buffer.baseAddress, buffer.count, scale, sequential ? 1 : 0, &out)
        }
    }
}
