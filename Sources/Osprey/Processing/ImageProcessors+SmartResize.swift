import COspreyVips

extension ImageProcessors {
    /// Resizes to cover `width` x `height`, then crops to exactly that size where libvips'
    /// attention measure finds the most interesting part (edges, skin tones, saturation), as
    /// thumbor's `smart/` and imgproxy's `g:sm` do. Identifier `smartresize:WxH`. Keeps animation
    /// frames (each frame is cropped on its own).
    package struct SmartResize: FrameProcessor {
        /// Target width in pixels (> 0).
        package let width: Int
        /// Target height in pixels (> 0).
        package let height: Int

        /// Covers and smart-crops to `width` x `height`.
        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String { "smartresize:\(width)x\(height)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width > 0, height > 0 else { throw invalid("target size \(width)x\(height) must be positive") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.apply {
                osprey_thumbnail_image(
                    $0, Int32(width), Int32(height), Int32(VIPS_SIZE_BOTH.rawValue),
                    Int32(VIPS_INTERESTING_ATTENTION.rawValue), &$1)
            }
        }
    }
}
