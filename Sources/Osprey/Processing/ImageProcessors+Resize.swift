import COspreyVips

extension ImageProcessors {
    /// How `ImageProcessors.Resize` fits an image to its target size.
    public enum ContentMode: String, Sendable, Hashable, CaseIterable {
        /// Scale to fit inside the target, keeping the aspect ratio; one side may come out smaller.
        case fit
        /// Scale to cover the target, keeping the aspect ratio, then crop the centre: exactly the target size.
        case fill
        /// Scale each axis independently to exactly the target size (Kingfisher's `.none`).
        case stretch
    }

    /// Resizes to a target size (upscaling too), with a ``ImageProcessors/ContentMode`` (default ``ImageProcessors/ContentMode/fit``).
    /// Identifier `resize:WxH:mode`. Keeps animation frames.
    package struct Resize: FrameProcessor {
        /// Target width in pixels (> 0).
        package let width: Int
        /// Target height in pixels (> 0).
        package let height: Int
        /// How the image fits the target. Default ``ImageProcessors/ContentMode/fit``.
        package let contentMode: ContentMode

        /// Resizes to `width` x `height` with `contentMode` (default `.fit`).
        package init(width: Int, height: Int, contentMode: ContentMode = .fit) {
            self.width = width
            self.height = height
            self.contentMode = contentMode
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "resize:\(width)x\(height):\(contentMode.rawValue)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width > 0, height > 0 else { throw invalid("target size \(width)x\(height) must be positive") }
        }

        /// Whether a `width` x `height` frame already has this resize's output size.
        func keepsFrame(width frameWidth: Int, height frameHeight: Int) -> Bool {
            switch contentMode {
            case .fit: (frameWidth == width && frameHeight <= height) || (frameHeight == height && frameWidth <= width)
            case .fill, .stretch: frameWidth == width && frameHeight == height
            }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let (size, crop): (VipsSize, VipsInteresting) =
                switch contentMode {
                case .fit: (VIPS_SIZE_BOTH, VIPS_INTERESTING_NONE)
                case .fill: (VIPS_SIZE_BOTH, VIPS_INTERESTING_CENTRE)
                case .stretch: (VIPS_SIZE_FORCE, VIPS_INTERESTING_NONE)
                }
            return try frame.apply {
                osprey_thumbnail_image($0, Int32(width), Int32(height), Int32(size.rawValue), Int32(crop.rawValue), &$1)
            }
        }
    }

    /// Downsamples to fit inside `width` x `height`, keeping the aspect ratio and never upscaling
    /// (Kingfisher's `DownsamplingImageProcessor`). Identifier `downsample:WxH`. Keeps animation frames.
    /// To avoid decoding the full image at all, prefer ``DecodingOptions/thumbnail``.
    package struct Downsample: FrameProcessor {
        /// Largest output width in pixels (> 0).
        package let width: Int
        /// Largest output height in pixels (> 0).
        package let height: Int

        /// Downsamples into a `width` x `height` box.
        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// Downsamples so the longer side is at most `maxPixelSize`.
        package init(maxPixelSize: Int) {
            self.init(width: maxPixelSize, height: maxPixelSize)
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "downsample:\(width)x\(height)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width > 0, height > 0 else { throw invalid("target size \(width)x\(height) must be positive") }
        }

        /// Whether a `width` x `height` frame already fits the box (nothing to do).
        func keepsFrame(width frameWidth: Int, height frameHeight: Int) -> Bool {
            frameWidth <= width && frameHeight <= height
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.apply {
                osprey_thumbnail_image($0, Int32(width), Int32(height), Int32(VIPS_SIZE_DOWN.rawValue), Int32(VIPS_INTERESTING_NONE.rawValue), &$1)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Resizes to a target size (upscaling too), with a ``ImageProcessors/ContentMode`` (default ``ImageProcessors/ContentMode/fit``).
    /// Identifier `resize:WxH:mode`. Keeps animation frames.
    ///
    /// The processor to `width` x `height` with `contentMode` (default `.fit`).
    public static func resize(width: Int, height: Int, contentMode: ImageProcessors.ContentMode = .fit) -> Self {
        Self([ImageProcessors.Resize(width: width, height: height, contentMode: contentMode)])
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Downsamples to fit inside `width` x `height`, keeping the aspect ratio and never upscaling
    /// (Kingfisher's `DownsamplingImageProcessor`). Identifier `downsample:WxH`. Keeps animation frames.
    /// To avoid decoding the full image at all, prefer ``DecodingOptions/thumbnail``.
    ///
    /// The processor into a `width` x `height` box.
    public static func downsample(width: Int, height: Int) -> Self { Self([ImageProcessors.Downsample(width: width, height: height)]) }
}
