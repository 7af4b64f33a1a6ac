import COspreyVips

/// Small compositions of libvips calls shared by the processors.
extension VipsImageRef {
    var alphaBand: Int? { hasAlpha ? bands - 1 : nil }

    /// Runs `body` on the colour bands only and puts the alpha band back afterwards.
    func splittingAlpha(_ body: (VipsImageRef) throws(VipsFailure) -> VipsImageRef) throws(VipsFailure) -> VipsImageRef {
        guard let alphaIndex = alphaBand else { return try body(self) }
        let colour = try apply { osprey_extract_bands($0, 0, Int32(alphaIndex), &$1) }
        var alpha = try apply { osprey_extract_bands($0, Int32(alphaIndex), 1, &$1) }
        var processed = try body(colour)
        if processed.bandFormat != VIPS_FORMAT_UCHAR {
            processed = try processed.apply { osprey_cast($0, Int32(VIPS_FORMAT_UCHAR.rawValue), &$1) }
        }
        if alpha.bandFormat != processed.bandFormat {
            alpha = try alpha.apply { osprey_cast($0, Int32(processed.bandFormat.rawValue), &$1) }
        }
        return try VipsImageRef.make { osprey_bandjoin2(processed.pointer, alpha.pointer, &$0) }
    }

    /// This image with an opaque alpha band added when it has none.
    func withAlpha() throws(VipsFailure) -> VipsImageRef {
        hasAlpha ? self : try apply { osprey_bandjoin_const1($0, 255, &$1) }
    }

    /// The colour bands only.
    func withoutAlpha() throws(VipsFailure) -> VipsImageRef {
        guard let alphaIndex = alphaBand else { return self }
        return try apply { osprey_extract_bands($0, 0, Int32(alphaIndex), &$1) }
    }

    /// A `width` x `height` sRGB image filled with `color` (4 bands).
    static func constant(width: Int, height: Int, color: RGBAColor) throws(VipsFailure) -> VipsImageRef {
        let values = color.rgbaDoubles
        let image = try VipsImageRef.make { out in
            values.withUnsafeBufferPointer { osprey_constant(Int32(width), Int32(height), $0.baseAddress, 4, &out) }
        }
        return try image.apply { osprey_retag($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
    }

    /// A one-band uchar image from `bytes` (`width * height`).
    static func mask(_ bytes: [UInt8], width: Int, height: Int) throws(VipsFailure) -> VipsImageRef {
        try VipsImageRef.make { out in
            bytes.withUnsafeBytes { raw in
                out = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), 1, VIPS_FORMAT_UCHAR)
                return out == nil ? -1 : 0
            }
        }
    }

    /// A 256 x 1 uchar lookup table of `bands` bands from `interleaved` (entry after entry, the
    /// bands of each entry together, as libvips stores pixels), for `osprey_maplut`.
    static func lookupTable(_ interleaved: [UInt8], bands: Int) throws(VipsFailure) -> VipsImageRef {
        try VipsImageRef.make { out in
            interleaved.withUnsafeBytes { raw in
                out = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, 256, 1, Int32(bands), VIPS_FORMAT_UCHAR)
                return out == nil ? -1 : 0
            }
        }
    }

    /// The values of a uint image (a histogram), rendered: band after band within each pixel.
    func uint32Values() throws(VipsFailure) -> [UInt32] {
        let uint = bandFormat == VIPS_FORMAT_UINT ? self : try apply { osprey_cast($0, Int32(VIPS_FORMAT_UINT.rawValue), &$1) }
        var size = 0
        guard let buffer = vips_image_write_to_memory(uint.pointer, &size) else { throw VipsFailure(message: Vips.takeError()) }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: size).bindMemory(to: UInt32.self))
    }

    /// Composites `overlay` onto this image with a libvips blend mode.
    func composite(_ overlay: VipsImageRef, mode: VipsBlendMode) throws(VipsFailure) -> VipsImageRef {
        try VipsImageRef.make { osprey_composite2(pointer, overlay.pointer, Int32(mode.rawValue), &$0) }
    }

    /// Linear transform `self * a + b` with one pair for all bands, output uchar.
    func linear(_ a: Double, _ b: Double) throws(VipsFailure) -> VipsImageRef {
        var a = a, b = b
        return try VipsImageRef.make { osprey_linear(pointer, &a, &b, 1, 1, &$0) }
    }
}
