import COspreyVips

extension ImageProcessors {
    /// Converts to pure black and white: pixels whose luminance is at least `threshold` become white,
    /// the rest black (alpha kept). Identifier `bw:T`. Keeps animation frames.
    package struct BlackWhite: FrameProcessor {
        /// Luminance threshold, 0...255. Default 128.
        package let threshold: Int

        /// Black and white at `threshold` (default 128).
        package init(threshold: Int = 128) {
            self.threshold = threshold
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "bw:\(threshold)" }

        func validate(for image: Image) throws(OspreyError) {
            guard (0...255).contains(threshold) else { throw invalid("threshold \(threshold) must be within 0...255") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                let grey = try colour.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }
                let binary = try grey.apply { osprey_moreeq_const1($0, Double(threshold), &$1) }
                let tagged = try binary.apply { osprey_retag($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }
                return try tagged.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Converts to pure black and white: pixels whose luminance is at least `threshold` become white,
    /// the rest black (alpha kept). Identifier `bw:T`. Keeps animation frames.
    ///
    /// The processor at `threshold` (default 128).
    public static func blackWhite(threshold: Int = 128) -> Self { Self([ImageProcessors.BlackWhite(threshold: threshold)]) }
}
