import COspreyVips

extension ImageProcessors {
    /// Convolves every band, alpha included, with a kernel of odd width and height, edges
    /// repeating the border pixels (thumbor's `convolution` filter). With `normalize`, the kernel
    /// is divided by the sum of its entries (when that is not 0). Identifier
    /// `convolve:K;K;…:COLUMNS[:raw]`. Keeps animation frames.
    package struct Convolve: FrameProcessor {
        /// The kernel, row by row.
        package let kernel: [Double]
        /// Entries per row of ``kernel``.
        package let columns: Int
        /// Whether the kernel is divided by the sum of its entries. Default `true`.
        package let normalize: Bool

        /// A convolution with `kernel` (row by row, `columns` entries a row; odd width and
        /// height, or `invalidArgument` when it runs).
        package init(kernel: [Double], columns: Int, normalize: Bool = true) {
            self.kernel = kernel
            self.columns = columns
            self.normalize = normalize
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String {
            "convolve:" + kernel.map(identifierNumber).joined(separator: ";") + ":\(columns)" + (normalize ? "" : ":raw")
        }

        /// Rows of ``kernel``.
        private var rows: Int { columns > 0 ? kernel.count / columns : 0 }

        func validate(for image: Image) throws(OspreyError) {
            if let problem = Self.problem(kernel: kernel, columns: columns) { throw invalid(problem) }
        }

        /// What is wrong with a kernel of `columns` entries a row (not an odd width by an odd
        /// height, over 15 x 15, or not finite), or `nil` when it can run.
        package static func problem(kernel: [Double], columns: Int) -> String? {
            guard columns > 0, !kernel.isEmpty, kernel.count % columns == 0, columns % 2 == 1, (kernel.count / columns) % 2 == 1 else {
                return "a kernel of \(kernel.count) entries in rows of \(columns) is not an odd width by an odd height"
            }
            guard kernel.count <= 225, kernel.allSatisfy(\.isFinite) else {
                return "the kernel must have at most 225 finite entries (15 x 15)"
            }
            return nil
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let sum = kernel.reduce(0, +)
            let scaled = normalize && sum != 0 ? kernel.map { $0 / sum } : kernel
            let convolved = try VipsImageRef.make { out in
                scaled.withUnsafeBufferPointer { osprey_conv(frame.pointer, $0.baseAddress, Int32(columns), Int32(rows), &out) }
            }
            return try convolved.apply { osprey_cast($0, Int32(VIPS_FORMAT_UCHAR.rawValue), &$1) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Convolves every band, alpha included, with a kernel of odd width and height, edges
    /// repeating the border pixels (thumbor's `convolution` filter). With `normalize`, the kernel
    /// is divided by the sum of its entries (when that is not 0). Identifier
    /// `convolve:K;K;…:COLUMNS[:raw]`. Keeps animation frames.
    ///
    /// The processor(`normalize` default `true`).
    public static func convolve(_ kernel: [Double], columns: Int, normalize: Bool = true) -> Self {
        Self([ImageProcessors.Convolve(kernel: kernel, columns: columns, normalize: normalize)])
    }
}
