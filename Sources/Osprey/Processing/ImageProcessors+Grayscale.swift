import COspreyVips

extension ImageProcessors {
    /// Converts to shades of grey (still 3-band sRGB, alpha kept). Identifier `grayscale`.
    /// Keeps animation frames.
    package struct Grayscale: FrameProcessor {
        /// The greyscale processor.
        package init() {}

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "grayscale" }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                try colour.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }
                    .apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Converts to shades of grey (still 3-band sRGB, alpha kept). Identifier `grayscale`.
    /// Keeps animation frames.
    ///
    /// The processor.
    public static var grayscale: Self { Self([ImageProcessors.Grayscale()]) }
}
