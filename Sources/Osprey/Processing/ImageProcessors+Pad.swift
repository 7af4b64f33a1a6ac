import COspreyVips

extension ImageProcessors {
    /// Centres the image on a `width` x `height` canvas of `background` (thumbor's `fill` with
    /// `fit-in`), and flattens transparent pixels onto an opaque background. A side of 0, or one
    /// smaller than the image, keeps the image's size on that side. A translucent background
    /// keeps (or adds) alpha. Identifier `pad:WxH:RRGGBB[AA]`. Keeps animation frames.
    public struct Pad: FrameProcessor {
        /// Canvas width (0: the image's). Default 0.
        public let width: Int
        /// Canvas height (0: the image's). Default 0.
        public let height: Int
        /// Canvas colour. Default white.
        public let background: RGBAColor

        /// Pads to `width` x `height` (default 0 x 0: only flatten) on `background` (default white).
        public init(width: Int = 0, height: Int = 0, background: RGBAColor = .white) {
            self.width = width
            self.height = height
            self.background = background
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        public var identifier: String { "pad:\(width)x\(height):\(background.hex)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width >= 0, height >= 0, width <= 100_000, height <= 100_000 else { throw invalid("canvas \(width)x\(height) is out of range") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let canvasWidth = max(width, frame.width), canvasHeight = max(height, frame.height)
            let translucent = background.alpha < 255
            var image = translucent ? try frame.withAlpha() : frame
            if canvasWidth != frame.width || canvasHeight != frame.height {
                let fill = image.hasAlpha ? background.rgbaDoubles : background.rgbDoubles
                let x = (canvasWidth - frame.width) / 2, y = (canvasHeight - frame.height) / 2
                image = try image.apply { input, out in
                    fill.withUnsafeBufferPointer {
                        osprey_embed(input, Int32(x), Int32(y), Int32(canvasWidth), Int32(canvasHeight), $0.baseAddress, Int32($0.count), &out)
                    }
                }
            }
            if !translucent && image.hasAlpha {
                let rgb = background.rgbDoubles
                image = try image.apply { input, out in rgb.withUnsafeBufferPointer { osprey_flatten(input, $0.baseAddress, 3, &out) } }
            }
            return image
        }
    }
}
