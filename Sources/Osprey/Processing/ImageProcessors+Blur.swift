import COspreyVips

extension ImageProcessors {
    /// Gaussian blur with standard deviation `sigma` pixels (alpha is blurred too).
    /// Identifier `blur:S`. Keeps animation frames.
    package struct Blur: FrameProcessor {
        /// The Gaussian's standard deviation in pixels (> 0).
        package let sigma: Double

        /// A blur of `sigma` pixels.
        package init(sigma: Double) {
            self.sigma = sigma
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "blur:\(identifierNumber(sigma))" }

        func validate(for image: Image) throws(OspreyError) {
            guard sigma > 0, sigma.isFinite else { throw invalid("sigma \(sigma) must be a positive number") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.apply { osprey_gaussblur($0, sigma, &$1) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Gaussian blur with standard deviation `sigma` pixels (alpha is blurred too).
    /// Identifier `blur:S`. Keeps animation frames.
    ///
    /// The processor with `sigma` pixels.
    public static func blur(sigma: Double) -> Self { Self([ImageProcessors.Blur(sigma: sigma)]) }
}
