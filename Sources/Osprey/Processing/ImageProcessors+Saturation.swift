import COspreyVips

extension ImageProcessors {
    /// Changes saturation in the HSP colour model, as thumbor's `saturation` filter: each colour
    /// channel moves away from (factor > 1) or towards (factor < 1) the pixel's perceived
    /// brightness `√(0.299 R² + 0.587 G² + 0.114 B²)`, `out = p + (x - p) * factor`, truncated and
    /// clamped to 0...255 (alpha kept). 1 changes nothing, 0 is grey, a negative factor turns the
    /// colours past grey. Images with one colour band are kept. Identifier `saturation:F`. Keeps
    /// animation frames.
    package struct Saturation: FrameProcessor {
        /// The factor; 1 changes nothing.
        package let factor: Double

        /// A saturation change by `factor` (finite, else `invalidArgument` when it runs).
        package init(factor: Double) {
            self.factor = factor
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "saturation:\(identifierNumber(factor))" }

        func validate(for image: Image) throws(OspreyError) {
            guard factor.isFinite else { throw invalid("factor \(factor) is not a finite number") }
        }

        func keepsFrame(width: Int, height: Int) -> Bool { factor == 1 }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                guard colour.bands == 3 else { return colour }
                // p = √(0.299 R² + 0.587 G² + 0.114 B²), one band.
                let squares = try VipsImageRef.make { osprey_multiply(colour.pointer, colour.pointer, &$0) }
                let weights = [0.299, 0.587, 0.114]
                let weighted = try squares.apply { input, out in weights.withUnsafeBufferPointer { osprey_recomb(input, $0.baseAddress, 1, 3, &out) }
                }
                let brightness = try weighted.apply { osprey_pow_const1($0, 0.5, &$1) }
                // x * factor + p * (1 - factor); the cast to uchar clamps, then truncates.
                var a = factor, b = 0.0, pa = 1 - factor
                let scaled = try VipsImageRef.make { osprey_linear(colour.pointer, &a, &b, 1, 0, &$0) }
                let grey = try VipsImageRef.make { osprey_linear(brightness.pointer, &pa, &b, 1, 0, &$0) }
                let sum = try VipsImageRef.make { osprey_add(scaled.pointer, grey.pointer, &$0) }
                return try sum.apply { osprey_cast($0, Int32(VIPS_FORMAT_UCHAR.rawValue), &$1) }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Changes saturation in the HSP colour model, as thumbor's `saturation` filter: each colour
    /// channel moves away from (factor > 1) or towards (factor < 1) the pixel's perceived
    /// brightness `√(0.299 R² + 0.587 G² + 0.114 B²)`, `out = p + (x - p) * factor`, truncated and
    /// clamped to 0...255 (alpha kept). 1 changes nothing, 0 is grey, a negative factor turns the
    /// colours past grey. Images with one colour band are kept. Identifier `saturation:F`. Keeps
    /// animation frames.
    ///
    /// The processor by `factor`.
    public static func saturation(_ factor: Double) -> Self { Self([ImageProcessors.Saturation(factor: factor)]) }
}
