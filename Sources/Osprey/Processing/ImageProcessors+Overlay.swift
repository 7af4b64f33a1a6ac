import COspreyVips

extension ImageProcessors {
    /// Overlays a colour with the "overlay" blend mode (darkens darks, lightens lights), keeping
    /// `fraction` of the original: 1 leaves the image as it is, 0 applies the colour fully
    /// (Kingfisher's `OverlayImageProcessor` semantics). Alpha is kept.
    /// Identifier `overlay:RRGGBB[AA]:F`. Keeps animation frames.
    package struct Overlay: FrameProcessor {
        /// The overlay colour; its alpha scales the effect too.
        package let color: RGBAColor
        /// How much of the original to keep, 0...1. Default 0.5.
        package let fraction: Double

        /// An overlay of `color` keeping `fraction` (default 0.5) of the original.
        package init(color: RGBAColor, fraction: Double = 0.5) {
            self.color = color
            self.fraction = fraction
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "overlay:\(color.hex):\(identifierNumber(fraction))" }

        func validate(for image: Image) throws(OspreyError) {
            guard (0...1).contains(fraction) else { throw invalid("fraction \(fraction) must be within 0...1") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            var layerColor = color
            layerColor.alpha = UInt8((Double(color.alpha) * (1 - fraction)).rounded())
            let layer = try VipsImageRef.constant(width: frame.width, height: frame.height, color: layerColor)
            let blended = try frame.withAlpha().composite(layer, mode: VIPS_BLEND_MODE_OVERLAY).normalisedToSRGB()
            // Put the original alpha back: the blend must not change transparency.
            let colour = try blended.withoutAlpha()
            guard let alphaIndex = frame.alphaBand else { return colour }
            let alpha = try frame.apply { osprey_extract_bands($0, Int32(alphaIndex), 1, &$1) }
            return try VipsImageRef.make { osprey_bandjoin2(colour.pointer, alpha.pointer, &$0) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Overlays a colour with the "overlay" blend mode (darkens darks, lightens lights), keeping
    /// `fraction` of the original: 1 leaves the image as it is, 0 applies the colour fully
    /// (Kingfisher's `OverlayImageProcessor` semantics). Alpha is kept.
    /// Identifier `overlay:RRGGBB[AA]:F`. Keeps animation frames.
    ///
    /// The processor of `color` keeping `fraction` (default 0.5) of the original.
    public static func overlay(_ color: RGBAColor, fraction: Double = 0.5) -> Self {
        Self([ImageProcessors.Overlay(color: color, fraction: fraction)])
    }
}
