import COspreyVips

extension ImageProcessors {
    /// Tints with a colour: the colour, at its own alpha, is laid over the opaque parts of the image
    /// (source-atop, as Kingfisher's `TintImageProcessor`). Transparency is kept.
    /// Identifier `tint:RRGGBB[AA]`. Keeps animation frames.
    package struct Tint: FrameProcessor {
        /// The tint; its alpha is the strength (255 paints the image flat).
        package let color: RGBAColor

        /// A tint of `color`.
        package init(color: RGBAColor) {
            self.color = color
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "tint:\(color.hex)" }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let layer = try VipsImageRef.constant(width: frame.width, height: frame.height, color: color)
            let tinted = try frame.withAlpha().composite(layer, mode: VIPS_BLEND_MODE_ATOP)
            return frame.hasAlpha ? tinted : try tinted.withoutAlpha()
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Tints with a colour: the colour, at its own alpha, is laid over the opaque parts of the image
    /// (source-atop, as Kingfisher's `TintImageProcessor`). Transparency is kept.
    /// Identifier `tint:RRGGBB[AA]`. Keeps animation frames.
    ///
    /// The processor with `color`.
    public static func tint(_ color: RGBAColor) -> Self { Self([ImageProcessors.Tint(color: color)]) }
}
