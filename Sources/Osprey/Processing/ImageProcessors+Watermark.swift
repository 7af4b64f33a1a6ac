import COspreyVips

extension ImageProcessors {
    /// Draws another image over this one (thumbor's `watermark` filter): placed at ``x``/``y``,
    /// made ``transparency`` percent transparent, optionally scaled down to fit a share of the
    /// image, or tiled along an axis whose position is ``Position/repeat``. The watermark's first frame is used; every frame of an animation gets it.
    /// Identifier `watermark:NAME:X:Y:T:W:H` (`NAME` names the watermark source, e.g. its URL).
    package struct Watermark: FrameProcessor {
        /// Where the watermark sits along one axis.
        package enum Position: Sendable, Hashable, CustomStringConvertible {
            /// Pixels from the left/top; negative: from the right/bottom edge.
            case pixels(Int)
            /// Percent of the image size from the left/top (negative: from the right/bottom).
            case percent(Double)
            /// Centred.
            case center
            /// Tiled along this axis from the image's edge (thumbor's `repeat`).
            case `repeat`

            package var description: String {
                switch self {
                case .pixels(let value): String(value)
                case .percent(let value): identifierNumber(value) + "p"
                case .center: "center"
                case .repeat: "repeat"
                }
            }

            func offset(image: Int, mark: Int) -> Int {
                switch self {
                case .center: return (image - mark) / 2
                case .repeat: return 0
                case .pixels(let value): return value >= 0 ? value : image - mark + value
                case .percent(let value):
                    let pixels = Int((Double(image) * abs(value) / 100).rounded())
                    return value >= 0 ? pixels : image - mark - pixels
                }
            }
        }

        /// The watermark image.
        package let mark: Image
        /// Names the watermark in the identifier (e.g. its URL).
        package let name: String
        /// Horizontal position. Default 0.
        package let x: Position
        /// Vertical position. Default 0.
        package let y: Position
        /// Transparency, 0 (opaque) ... 100 (invisible). Default 0.
        package let transparency: Int
        /// Largest watermark width, in percent of the image width. Default `nil`: as is.
        package let widthRatio: Double?
        /// Largest watermark height, in percent of the image height. Default `nil`: as is.
        package let heightRatio: Double?

        /// A watermark of `mark` (named `name`) at `x`, `y` with `transparency` (defaults: top
        /// left, opaque, unscaled).
        package init(
            mark: Image, name: String, x: Position = .pixels(0), y: Position = .pixels(0), transparency: Int = 0,
            widthRatio: Double? = nil, heightRatio: Double? = nil
        ) {
            self.mark = mark
            self.name = name
            self.x = x
            self.y = y
            self.transparency = transparency
            self.widthRatio = widthRatio
            self.heightRatio = heightRatio
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String {
            "watermark:\(name):\(x):\(y):\(transparency):\(widthRatio.map(identifierNumber) ?? "none"):\(heightRatio.map(identifierNumber) ?? "none")"
        }

        func validate(for image: Image) throws(OspreyError) {
            guard (0...100).contains(transparency) else { throw invalid("transparency \(transparency) is outside 0...100") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            var overlay = try mark.storage.apply { osprey_extract_area($0, 0, 0, Int32(mark.width), Int32(mark.height), &$1) }
            if widthRatio != nil || heightRatio != nil {
                let boxWidth = max(1, Int(Double(frame.width) * (widthRatio ?? 100) / 100))
                let boxHeight = max(1, Int(Double(frame.height) * (heightRatio ?? 100) / 100))
                overlay = try overlay.apply {
                    osprey_thumbnail_image(
                        $0, Int32(boxWidth), Int32(boxHeight), Int32(VIPS_SIZE_DOWN.rawValue), Int32(VIPS_INTERESTING_NONE.rawValue), &$1)
                }
            }
            overlay = try overlay.withAlpha()
            if transparency > 0 {
                var a = [1, 1, 1, Double(100 - transparency) / 100], b = [0.0, 0, 0, 0]
                overlay = try VipsImageRef.make { out in
                    a.withUnsafeMutableBufferPointer { a in
                        b.withUnsafeMutableBufferPointer { b in osprey_linear(overlay.pointer, a.baseAddress, b.baseAddress, 4, 1, &out) }
                    }
                }
            }
            let left = x.offset(image: frame.width, mark: overlay.width), top = y.offset(image: frame.height, mark: overlay.height)
            let across = x == .repeat ? (frame.width + overlay.width - 1) / overlay.width : 1
            let down = y == .repeat ? (frame.height + overlay.height - 1) / overlay.height : 1
            if across > 1 || down > 1 {
                overlay = try overlay.apply { osprey_replicate($0, Int32(across), Int32(down), &$1) }
            }
            let clear = [0.0, 0, 0, 0]
            let canvas = try overlay.apply { input, out in
                clear.withUnsafeBufferPointer {
                    osprey_embed(input, Int32(left), Int32(top), Int32(frame.width), Int32(frame.height), $0.baseAddress, 4, &out)
                }
            }
            let composed = try frame.composite(canvas, mode: VIPS_BLEND_MODE_OVER)
            return frame.hasAlpha ? composed : try composed.withoutAlpha()
        }
    }
}
