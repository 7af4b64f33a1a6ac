import COspreyVips

extension ImageProcessors {
    /// Cuts a `width` x `height` area, without resizing, where libvips' attention measure finds
    /// the most interesting part (edges, skin tones, saturation), as imgproxy's `c:W:H:sm` does.
    /// A side larger than the image's keeps the image's. Identifier `smartcrop:WxH`. Keeps
    /// animation frames (each frame is cropped on its own).
    package struct SmartCrop: FrameProcessor {
        /// Width of the area in pixels (> 0).
        package let width: Int
        /// Height of the area in pixels (> 0).
        package let height: Int

        /// Smart-crops to `width` x `height` (each at most the image's side).
        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String { "smartcrop:\(width)x\(height)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width > 0, height > 0 else { throw invalid("crop size \(width)x\(height) must be positive") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let w = min(width, frame.width), h = min(height, frame.height)
            guard w < frame.width || h < frame.height else { return frame }
            return try frame.apply { osprey_smartcrop($0, Int32(w), Int32(h), &$1) }
        }
    }
}
