import COspreyVips

/// Decode planning: the first step of a processor chain folded into the decode.
///
/// When a chain begins with a step that only shrinks the image — `ImageProcessors.Resize`
/// (fit, fill or stretch) or `ImageProcessors.Downsample` — the decoder produces that step's
/// output directly with libvips shrink-on-load (`vips_thumbnail_buffer`: JPEG DCT scaling, WebP
/// scale-on-load, and a single reduce), never holding the full-size pixels; the pipeline then
/// runs only the rest of the chain. The plan is made from the chain alone; whether it folds is
/// decided from the source's header, after EXIF orientation:
/// - a step that would upscale on either axis is not folded (the full decode runs, then the step);
/// - a step that would leave the size as it is (a downsample of a source that fits its box, a
///   resize to the source's own size) is not folded either: the full decode is its output;
/// - on an animation only fit and downsample fold (libvips 8.14 crops the frame strip as one
///   image, so fill and stretch run frame by frame after a full decode);
/// - nothing folds when ``DecodingOptions/thumbnail`` or ``DecodingOptions/scaleDownLimitBytes``
///   already choose a decode size.
///
/// Later steps (a crop after the resize, a blur…) run on the shrunk image, as they would have
/// on the full-size step's output; a step before the shrink (a crop, a blur) means no plan.
struct DecodePlan: Hashable, Sendable {
    /// How the folded step fits its box.
    enum Fit: Hashable, Sendable {
        /// ``ImageProcessors/ContentMode/fit``: inside the box, keeping the aspect ratio.
        case fit
        /// ``ImageProcessors/ContentMode/fill``: cover the box, then crop its centre.
        case fill
        /// ``ImageProcessors/ContentMode/stretch``: exactly the box, each axis on its own.
        case stretch
        /// `ImageProcessors.Downsample`: inside the box, never upscaling.
        case downsample
    }

    var width: Int
    var height: Int
    var fit: Fit

    /// The plan for `processors` decoded with `decoding`, or `nil` when the first step cannot fold.
    init?(processors: [any ImageProcessing], decoding: DecodingOptions) {
        guard decoding.thumbnail == nil, decoding.scaleDownLimitBytes == nil, let first = processors.first else { return nil }
        switch first {
        case let resize as ImageProcessors.Resize:
            let fit: Fit =
                switch resize.contentMode {
                case .fit: .fit
                case .fill: .fill
                case .stretch: .stretch
                }
            self.init(width: resize.width, height: resize.height, fit: fit)
        case let downsample as ImageProcessors.Downsample:
            self.init(width: downsample.width, height: downsample.height, fit: .downsample)
        default:
            return nil
        }
        guard width > 0, height > 0 else { return nil }
    }

    init(width: Int, height: Int, fit: Fit) {
        self.width = width
        self.height = height
        self.fit = fit
    }

    /// The decode that makes the step's output for a source whose upright frames are
    /// `sourceWidth` x `sourceHeight`, `frames` of them; `nil` when the step does not fold (it
    /// would upscale an axis, or it crops or stretches an animation) or has nothing to do (the
    /// source already has the step's output size, so the full decode is that output and the step
    /// returns it as it is).
    ///
    /// A fit is decoded to the exact size the step computes from the source (libvips' own
    /// shrink-on-load rounds from the block-shrunk size, and came out a row short), so the
    /// planned and the full decode always agree on the size.
    func shrinkBox(sourceWidth: Int, sourceHeight: Int, frames: Int) -> ShrinkBox? {
        guard sourceWidth > 0, sourceHeight > 0 else { return nil }
        let scaleX = Double(width) / Double(sourceWidth), scaleY = Double(height) / Double(sourceHeight)
        switch fit {
        case .fit, .downsample:
            let scale = min(scaleX, scaleY)
            // A fit that would upscale does not fold; a downsample of a source that fits, or a
            // fit at scale 1, has nothing to do.
            if scale >= 1 { return nil }
            let outWidth = max(1, Int((Double(sourceWidth) * scale).rounded()))
            let outHeight = max(1, Int((Double(sourceHeight) * scale).rounded()))
            return ShrinkBox(width: outWidth, height: outHeight, size: VIPS_SIZE_FORCE, crop: VIPS_INTERESTING_NONE)
        case .fill:
            guard frames == 1, max(scaleX, scaleY) <= 1, scaleX < 1 || scaleY < 1 else { return nil }
            return ShrinkBox(width: width, height: height, size: VIPS_SIZE_BOTH, crop: VIPS_INTERESTING_CENTRE)
        case .stretch:
            guard frames == 1, scaleX <= 1, scaleY <= 1, scaleX < 1 || scaleY < 1 else { return nil }
            return ShrinkBox(width: width, height: height, size: VIPS_SIZE_FORCE, crop: VIPS_INTERESTING_NONE)
        }
    }
}

/// The arguments of a shrink-on-load decode (`vips_thumbnail_buffer`): a box, how the image
/// fits it (`VipsSize`) and whether it is cropped to it (`VipsInteresting`).
struct ShrinkBox: Sendable {
    var width: Int
    var height: Int
    var size: VipsSize
    var crop: VipsInteresting

    /// The box of ``DecodingOptions/Thumbnail``: fit inside without upscaling, or stretch.
    init(_ thumbnail: DecodingOptions.Thumbnail) {
        self.init(
            width: thumbnail.width, height: thumbnail.height,
            size: thumbnail.preserveAspectRatio ? VIPS_SIZE_DOWN : VIPS_SIZE_FORCE, crop: VIPS_INTERESTING_NONE)
    }

    init(width: Int, height: Int, size: VipsSize, crop: VipsInteresting) {
        self.width = width
        self.height = height
        self.size = size
        self.crop = crop
    }

    /// Whether the result keeps the aspect ratio (a fit or a cover; not a stretch).
    var preservesAspectRatio: Bool { size != VIPS_SIZE_FORCE }
}
