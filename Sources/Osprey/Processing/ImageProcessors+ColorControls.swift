import COspreyVips

extension ImageProcessors {
    /// Adjusts brightness, contrast and saturation, like Kingfisher's `ColorControlsProcessor`
    /// (alpha kept). Identifier `color:B:C:S`. Keeps animation frames.
    ///
    /// Per colour band: `saturated = grey + (x - grey) * saturation`, then
    /// `out = (saturated - 128) * contrast + 128 + brightness * 255`.
    package struct ColorControls: FrameProcessor {
        /// Added brightness, -1...1. Default 0.
        package let brightness: Double
        /// Contrast factor around mid-grey, ≥ 0. Default 1.
        package let contrast: Double
        /// Saturation factor, ≥ 0 (0 is greyscale). Default 1.
        package let saturation: Double

        /// Colour controls; the defaults (0, 1, 1) leave the image unchanged.
        package init(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1) {
            self.brightness = brightness
            self.contrast = contrast
            self.saturation = saturation
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String {
            "color:\(identifierNumber(brightness)):\(identifierNumber(contrast)):\(identifierNumber(saturation))"
        }

        func validate(for image: Image) throws(OspreyError) {
            guard (-1...1).contains(brightness) else { throw invalid("brightness \(brightness) must be within -1...1") }
            guard contrast >= 0, contrast.isFinite else { throw invalid("contrast \(contrast) must be ≥ 0") }
            guard saturation >= 0, saturation.isFinite else { throw invalid("saturation \(saturation) must be ≥ 0") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                var current = colour
                if saturation != 1 {
                    let grey = try colour.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }
                        .apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
                    var a = saturation, b = 0.0, ga = 1 - saturation
                    let scaledColour = try VipsImageRef.make { osprey_linear(colour.pointer, &a, &b, 1, 0, &$0) }
                    let scaledGrey = try VipsImageRef.make { osprey_linear(grey.pointer, &ga, &b, 1, 0, &$0) }
                    current = try VipsImageRef.make { osprey_add(scaledColour.pointer, scaledGrey.pointer, &$0) }
                }
                return try current.linear(contrast, 128 * (1 - contrast) + brightness * 255)
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Adjusts brightness, contrast and saturation, like Kingfisher's `ColorControlsProcessor`
    /// (alpha kept). Identifier `color:B:C:S`. Keeps animation frames.
    ///
    /// Per colour band: `saturated = grey + (x - grey) * saturation`, then
    /// `out = (saturated - 128) * contrast + 128 + brightness * 255`.
    ///
    /// The processor(defaults 0, 1, 1: unchanged).
    public static func colorControls(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1) -> Self {
        Self([ImageProcessors.ColorControls(brightness: brightness, contrast: contrast, saturation: saturation)])
    }
}
