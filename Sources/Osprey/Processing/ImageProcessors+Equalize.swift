import COspreyVips

extension ImageProcessors {
    /// Histogram equalisation of each colour channel separately (alpha kept), as thumbor's
    /// `equalize` filter computes it: a value `v` becomes
    /// `255 * (cdf(v) - cdf(min)) / (pixels - cdf(min))`, truncated, where `cdf` counts the
    /// channel's pixels at or below a value and `min` is the channel's smallest value, so each
    /// channel's darkest value goes to 0 and its brightest to 255. A channel with one value only
    /// is kept. Identifier `equalize`. Keeps animation frames (each equalised on its own).
    package struct Equalize: FrameProcessor {
        /// The equalisation.
        package init() {}

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "equalize" }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            try frame.splittingAlpha { (colour) throws(VipsFailure) in
                let histogram = try colour.apply { osprey_hist_find($0, &$1) }
                let counts = try histogram.uint32Values()
                let bands = colour.bands
                // The histogram is 256 x 1 with one band per channel, interleaved.
                var interleaved = [UInt8](repeating: 0, count: 256 * bands)
                for band in 0..<bands {
                    let table = Self.table((0..<256).map { Int(counts[$0 * bands + band]) })
                    for value in 0..<256 { interleaved[value * bands + band] = table[value] }
                }
                let lut = try VipsImageRef.lookupTable(interleaved, bands: bands)
                return try colour.apply { osprey_maplut($0, lut.pointer, &$1) }
            }
        }

        /// The equalising table of one channel from its 256 counts (identity for a channel of one
        /// value, or none).
        static func table(_ counts: [Int]) -> [UInt8] {
            let pixels = counts.reduce(0, +)
            guard let first = counts.firstIndex(where: { $0 > 0 }), counts[first] < pixels else { return (0...255).map { UInt8($0) } }
            let lowest = counts[first]
            var cumulative = 0
            return counts.map { count in
                cumulative += count
                return UInt8(clamping: Int(Float(cumulative - lowest) / Float(pixels - lowest) * 255))
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Histogram equalisation of each colour channel separately (alpha kept), as thumbor's
    /// `equalize` filter computes it: a value `v` becomes
    /// `255 * (cdf(v) - cdf(min)) / (pixels - cdf(min))`, truncated, where `cdf` counts the
    /// channel's pixels at or below a value and `min` is the channel's smallest value, so each
    /// channel's darkest value goes to 0 and its brightest to 255. A channel with one value only
    /// is kept. Identifier `equalize`. Keeps animation frames (each equalised on its own).
    ///
    /// The processor.
    public static var equalize: Self { Self([ImageProcessors.Equalize()]) }
}
