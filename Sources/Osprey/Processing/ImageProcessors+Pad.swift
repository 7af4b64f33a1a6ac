import COspreyVips

extension ImageProcessors {
    /// Places the image on a `width` x `height` canvas of `background`, centred or by a
    /// ``ImageProcessors/Gravity`` (thumbor's `fill` with `fit-in`, imgproxy's `extend`), and flattens transparent
    /// pixels onto an opaque background. A side of 0, or one smaller than the image, keeps the
    /// image's size on that side. A translucent background keeps alpha, and adds it when the
    /// canvas grows. Identifier `pad:WxH:RRGGBB[AA]`, with `:gravity` when not centred. Keeps
    /// animation frames.
    package struct Pad: FrameProcessor {
        /// Canvas width (0: the image's). Default 0.
        package let width: Int
        /// Canvas height (0: the image's). Default 0.
        package let height: Int
        /// Canvas colour. Default white.
        package let background: RGBAColor
        /// Where the image sits on a larger canvas. Default ``ImageProcessors/Gravity/center``.
        package let gravity: Gravity

        /// Pads to `width` x `height` (default 0 x 0: only flatten) on `background` (default
        /// white), the image placed by `gravity` (default centred).
        package init(width: Int = 0, height: Int = 0, background: RGBAColor = .white, gravity: Gravity = .center) {
            self.width = width
            self.height = height
            self.background = background
            self.gravity = gravity
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String {
            "pad:\(width)x\(height):\(background.hex)" + (gravity == .center ? "" : ":\(gravity.rawValue)")
        }

        func validate(for image: Image) throws(OspreyError) {
            guard width >= 0, height >= 0, width <= 100_000, height <= 100_000 else { throw invalid("canvas \(width)x\(height) is out of range") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let canvasWidth = max(width, frame.width), canvasHeight = max(height, frame.height)
            let translucent = background.alpha < 255
            let grows = canvasWidth != frame.width || canvasHeight != frame.height
            var image = translucent && grows ? try frame.withAlpha() : frame
            if grows {
                let fill = image.hasAlpha ? background.rgbaDoubles : background.rgbDoubles
                let (x, y) = gravity.origin(freeX: canvasWidth - frame.width, freeY: canvasHeight - frame.height)
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

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Places the image on a `width` x `height` canvas of `background` (default 0 x 0 on white:
    /// only flatten transparent pixels), placed by `gravity` (default centred): thumbor's `fill`
    /// with `fit-in`, imgproxy's `extend`. A side of 0, or one smaller than the image, keeps the
    /// image's size on that side. Identifier `pad:WxH:RRGGBB[AA]`. Keeps animation frames.
    public static func pad(
        width: Int = 0, height: Int = 0, background: RGBAColor = .white, gravity: ImageProcessors.Gravity = .center
    ) -> Self {
        Self([ImageProcessors.Pad(width: width, height: height, background: background, gravity: gravity)])
    }
}
