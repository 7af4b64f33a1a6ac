import COspreyVips

extension ImageProcessors {
    /// Unsharp-mask sharpening of the colour bands (libvips `sharpen`), alpha untouched.
    /// Identifier `sharpen:S`. Keeps animation frames.
    package struct Sharpen: FrameProcessor {
        /// The mask's standard deviation in pixels (> 0). Default 1.
        package let sigma: Double

        /// Sharpening with `sigma` (default 1).
        package init(sigma: Double = 1) {
            self.sigma = sigma
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "sharpen:\(identifierNumber(sigma))" }

        func validate(for image: Image) throws(OspreyError) {
            guard sigma > 0, sigma.isFinite else { throw invalid("sigma \(sigma) must be a positive number") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                let sharpened = try colour.apply { osprey_sharpen($0, sigma, &$1) }
                return try sharpened.normalisedToSRGB()
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Unsharp-mask sharpening of the colour bands (libvips `sharpen`), alpha untouched.
    /// Identifier `sharpen:S`. Keeps animation frames.
    ///
    /// The processor with `sigma` (default 1).
    public static func sharpen(sigma: Double = 1) -> Self { Self([ImageProcessors.Sharpen(sigma: sigma)]) }
}
