import COspreyVips

extension ImageProcessors {
    /// Cuts away the border that has the background's colour, within `threshold` (default 10):
    /// thumbor's `trim` (the top-left or the bottom-right pixel's colour) and imgproxy's `t` (the
    /// top-left pixel's, or a given colour; optionally as much cut from left and right, or from
    /// top and bottom). Alpha is ignored. An image that is all background is returned as is;
    /// animations are returned as is (their frames could trim differently). Identifier
    /// `trim:T[:REFERENCE][:h|v|hv]`, the reference `topleft` (omitted unless the sides are
    /// equalised), `bottomright` or `RRGGBB`.
    package struct Trim: ImageProcessing {
        /// What the border's colour is.
        package enum Background: Sendable, Hashable {
            /// The top-left pixel's colour.
            case topLeft
            /// The bottom-right pixel's colour.
            case bottomRight
            /// This colour (its alpha is ignored).
            case color(RGBAColor)
        }

        /// How far (in pixel value) a colour may be from the background and still be trimmed. Default 10.
        package let threshold: Double
        /// The border's colour. Default ``Background/topLeft``.
        package let background: Background
        /// Whether left and right lose the same width: the smaller of the two cuts. Default `false`.
        package let equalHorizontal: Bool
        /// Whether top and bottom lose the same height: the smaller of the two cuts. Default `false`.
        package let equalVertical: Bool

        /// Trims with `threshold` (default 10) against `background` (default the top-left pixel's
        /// colour), the sides equalised as asked (default not).
        package init(threshold: Double = 10, background: Background = .topLeft, equalHorizontal: Bool = false, equalVertical: Bool = false) {
            self.threshold = threshold
            self.background = background
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String {
            let equal = (equalHorizontal ? "h" : "") + (equalVertical ? "v" : "")
            let reference: String
            switch background {
            case .topLeft: reference = equal.isEmpty ? "" : ":topleft"
            case .bottomRight: reference = ":bottomright"
            case .color(let color): reference = ":" + String(color.hex.prefix(6))
            }
            return "trim:\(identifierNumber(threshold))" + reference + (equal.isEmpty ? "" : ":\(equal)")
        }

        /// Runs the processor; see ``ImageProcessing/process(_:)``.
        package func process(_ image: Image) throws(OspreyError) -> Image {
            guard !image.isAnimated else { return image }
            guard threshold >= 0 else { throw .processing(.invalidArgument(processor: identifier, message: "threshold \(threshold) must be ≥ 0")) }
            var left: Int32 = 0, top: Int32 = 0, width: Int32 = 0, height: Int32 = 0
            Vips.ensureInitialised()
            let status: Int32
            switch background {
            case .color(let color):
                let rgb = [Double(color.red), Double(color.green), Double(color.blue)]
                status = rgb.withUnsafeBufferPointer {
                    osprey_find_trim(image.storage.pointer, threshold, $0.baseAddress, 0, &left, &top, &width, &height)
                }
            case .topLeft, .bottomRight:
                let corner: Int32 = background == .bottomRight ? 1 : 0
                status = osprey_find_trim(image.storage.pointer, threshold, nil, corner, &left, &top, &width, &height)
            }
            guard status == 0 else { throw .processing(.failed(processor: identifier, message: Vips.takeError())) }
            guard width > 0, height > 0 else { return image }
            var rect = (x: Int(left), y: Int(top), width: Int(width), height: Int(height))
            if equalHorizontal {
                // As much off each side as the smaller cut.
                let right = image.width - rect.x - rect.width
                rect.width += abs(right - rect.x)
                rect.x = min(rect.x, right)
            }
            if equalVertical {
                let bottom = image.height - rect.y - rect.height
                rect.height += abs(bottom - rect.y)
                rect.y = min(rect.y, bottom)
            }
            guard rect.width < image.width || rect.height < image.height else { return image }
            return try Crop(.rect(x: rect.x, y: rect.y, width: rect.width, height: rect.height)).process(image)
        }
    }
}
