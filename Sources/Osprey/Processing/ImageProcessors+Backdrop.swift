import COspreyVips

extension ImageProcessors {
    /// Centres the image on a `width` x `height` canvas made from the image itself: thumbor's
    /// `fill(blur)` (the image stretched to the canvas and blurred) and `fill(auto)` (the image's
    /// median colour, channel by channel). A side of 0, or one smaller than the image, keeps the
    /// image's size on that side; an image that already fills the canvas is returned as is.
    /// Identifiers `backdrop:WxH:blur:SIGMA` and `backdrop:WxH:median`. Keeps animation frames.
    package struct Backdrop: FrameProcessor {
        /// What the canvas is made of.
        package enum Style: Sendable, Hashable {
            /// The image stretched to the canvas, blurred with a Gaussian of `sigma` (thumbor uses 50).
            case blurred(sigma: Double)
            /// One colour: the median of each channel over the image (transparent pixels are
            /// flattened onto it, as `ImageProcessors.Pad` does).
            case medianColor
        }

        /// Canvas width (0: the image's). Default 0.
        package let width: Int
        /// Canvas height (0: the image's). Default 0.
        package let height: Int
        /// Default ``Style/blurred(sigma:)`` with sigma 50, as thumbor's `fill(blur)`.
        package let style: Style

        /// A `width` x `height` backdrop (defaults 0 x 0) of `style` (default blurred, sigma 50).
        package init(width: Int = 0, height: Int = 0, style: Style = .blurred(sigma: 50)) {
            self.width = width
            self.height = height
            self.style = style
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String {
            switch style {
            case .blurred(let sigma): "backdrop:\(width)x\(height):blur:\(identifierNumber(sigma))"
            case .medianColor: "backdrop:\(width)x\(height):median"
            }
        }

        func validate(for image: Image) throws(OspreyError) {
            guard width >= 0, height >= 0, width <= 100_000, height <= 100_000 else { throw invalid("canvas \(width)x\(height) is out of range") }
            if case .blurred(let sigma) = style, !(0...1_000).contains(sigma) { throw invalid("sigma \(sigma) is outside 0...1000") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let canvasWidth = max(width, frame.width), canvasHeight = max(height, frame.height)
            guard canvasWidth != frame.width || canvasHeight != frame.height else { return frame }
            let x = (canvasWidth - frame.width) / 2, y = (canvasHeight - frame.height) / 2
            switch style {
            case .medianColor:
                var median: [Double] = []
                for band in 0..<min(frame.bands, 3) {
                    var threshold: Int32 = 0
                    guard osprey_band_percent(frame.pointer, Int32(band), 50, &threshold) == 0 else { throw VipsFailure(message: Vips.takeError()) }
                    median.append(Double(threshold))
                }
                while median.count < 3 { median.append(median.first ?? 0) }
                let color = RGBAColor(
                    red: UInt8(clamping: Int(median[0])), green: UInt8(clamping: Int(median[1])), blue: UInt8(clamping: Int(median[2])))
                return try Pad(width: canvasWidth, height: canvasHeight, background: color).transform(frame)
            case .blurred(let sigma):
                var canvas = try frame.apply {
                    osprey_thumbnail_image(
                        $0, Int32(canvasWidth), Int32(canvasHeight), Int32(VIPS_SIZE_FORCE.rawValue),
                        Int32(VIPS_INTERESTING_NONE.rawValue), &$1)
                }
                if sigma > 0 { canvas = try canvas.apply { osprey_gaussblur($0, sigma, &$1) } }
                if canvas.bandFormat != frame.bandFormat {
                    canvas = try canvas.apply { osprey_cast($0, Int32(frame.bandFormat.rawValue), &$1) }
                }
                guard frame.hasAlpha else {
                    return try VipsImageRef.make { osprey_insert(canvas.pointer, frame.pointer, Int32(x), Int32(y), &$0) }
                }
                let clear = [0.0, 0, 0, 0]
                let placed = try frame.apply { input, out in
                    clear.withUnsafeBufferPointer {
                        osprey_embed(input, Int32(x), Int32(y), Int32(canvasWidth), Int32(canvasHeight), $0.baseAddress, 4, &out)
                    }
                }
                return try canvas.composite(placed, mode: VIPS_BLEND_MODE_OVER)
            }
        }
    }
}
