import COspreyVips

extension ImageProcessors {
    /// Adds a solid border of `width` pixels on every side. The output is `2 * width` larger each way.
    /// A translucent colour gives the output alpha. Identifier `border:W:RRGGBB[AA]`. Keeps animation frames.
    package struct Border: FrameProcessor {
        /// Border thickness in pixels (> 0).
        package let width: Int
        /// Border colour. Default black.
        package let color: RGBAColor

        /// A `width`-pixel border in `color` (default black).
        package init(width: Int, color: RGBAColor = .black) {
            self.width = width
            self.color = color
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "border:\(width):\(color.hex)" }

        func validate(for image: Image) throws(OspreyError) {
            guard width > 0 else { throw invalid("width \(width) must be positive") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let input = color.alpha < 255 ? try frame.withAlpha() : frame
            let background = input.hasAlpha ? color.rgbaDoubles : color.rgbDoubles
            return try input.apply { image, out in
                background.withUnsafeBufferPointer {
                    osprey_embed(
                        image, Int32(width), Int32(width), Int32(frame.width + 2 * width), Int32(frame.height + 2 * width),
                        $0.baseAddress, Int32($0.count), &out)
                }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Adds a solid border of `width` pixels on every side. The output is `2 * width` larger each way.
    /// A translucent colour gives the output alpha. Identifier `border:W:RRGGBB[AA]`. Keeps animation frames.
    ///
    /// The processor of `width` pixels in `color` (default black).
    public static func border(width: Int, color: RGBAColor = .black) -> Self { Self([ImageProcessors.Border(width: width, color: color)]) }
}
