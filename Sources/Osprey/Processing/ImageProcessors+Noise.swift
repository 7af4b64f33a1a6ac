import COspreyVips

extension ImageProcessors {
    /// Adds noise, as thumbor's `noise` filter: each pixel's colour channels all move by one
    /// random offset in `-amount/2 ..< amount - amount/2`, clamped to 0...255 (alpha kept). The
    /// offsets are glibc's `random()` after `srandom(seed)`, pixel after pixel, so a seed gives
    /// thumbor's pixels; seed 0 is glibc's default seed (1). The same seed always gives the same
    /// image, which is what makes the result cacheable. Identifier `noise:AMOUNT[:SEED]`. Keeps
    /// animation frames (each frame gets the same pattern).
    package struct Noise: FrameProcessor {
        /// The spread of the offsets, 0...100; 0 changes nothing.
        package let amount: Int
        /// The generator's seed. Default 0 (glibc's default, 1).
        package let seed: UInt32

        /// Noise of `amount` (0...100, else `invalidArgument` when it runs) from `seed` (default 0).
        package init(amount: Int, seed: UInt32 = 0) {
            self.amount = amount
            self.seed = seed
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "noise:\(amount)" + (seed == 0 ? "" : ":\(seed)") }

        func validate(for image: Image) throws(OspreyError) {
            guard (0...100).contains(amount) else { throw invalid("amount \(amount) is outside 0...100") }
        }

        func keepsFrame(width: Int, height: Int) -> Bool { amount == 0 }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let (width, height) = (frame.width, frame.height)
            var offsets = [Int8](repeating: 0, count: width * height)
            let filled = offsets.withUnsafeMutableBufferPointer { osprey_noise_offsets(seed, Int32(amount), $0.baseAddress, width * height) }
            guard filled == 0 else { throw VipsFailure(message: "noise amount \(amount) is not positive") }
            let noise = try VipsImageRef.make { out in
                offsets.withUnsafeBytes { raw in
                    out = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), 1, VIPS_FORMAT_CHAR)
                    return out == nil ? -1 : 0
                }
            }
            return try frame.splittingAlpha { (colour) throws(VipsFailure) in
                // uchar + char is short; the cast back to uchar clamps to 0...255.
                let sum = try VipsImageRef.make { osprey_add(colour.pointer, noise.pointer, &$0) }
                return try sum.apply { osprey_cast($0, Int32(VIPS_FORMAT_UCHAR.rawValue), &$1) }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Adds noise, as thumbor's `noise` filter: each pixel's colour channels all move by one
    /// random offset in `-amount/2 ..< amount - amount/2`, clamped to 0...255 (alpha kept). The
    /// offsets are glibc's `random()` after `srandom(seed)`, pixel after pixel, so a seed gives
    /// thumbor's pixels; seed 0 is glibc's default seed (1). The same seed always gives the same
    /// image, which is what makes the result cacheable. Identifier `noise:AMOUNT[:SEED]`. Keeps
    /// animation frames (each frame gets the same pattern).
    ///
    /// The processor(`seed` default 0).
    public static func noise(_ amount: Int, seed: UInt32 = 0) -> Self { Self([ImageProcessors.Noise(amount: amount, seed: seed)]) }
}
