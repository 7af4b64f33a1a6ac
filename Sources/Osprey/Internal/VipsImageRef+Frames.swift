import COspreyVips

extension VipsImageRef {
    /// Applies `transform` to each frame of a vertically stacked animation and stacks the results
    /// again. Returns the new image and the new frame height. A still image is transformed directly.
    ///
    /// Every frame must come out the same size, which holds for the geometric transforms Osprey runs.
    func mapFrames(frameHeight: Int, _ transform: (VipsImageRef) throws(VipsFailure) -> VipsImageRef) throws(VipsFailure) -> (VipsImageRef, Int) {
        let frames = max(1, height / max(1, frameHeight))
        if frames == 1 {
            let out = try transform(self)
            return (out, out.height)
        }
        var outputs: [VipsImageRef] = []
        outputs.reserveCapacity(frames)
        for index in 0..<frames {
            let frame = try apply { osprey_extract_area($0, 0, Int32(index * frameHeight), Int32(width), Int32(frameHeight), &$1) }
            outputs.append(try transform(frame))
        }
        let newFrameHeight = outputs[0].height
        var pointers: [UnsafeMutablePointer<VipsImage>?] = outputs.map { $0.pointer }
        let joined = try VipsImageRef.make { out in
            pointers.withUnsafeMutableBufferPointer { osprey_arrayjoin_vertical($0.baseAddress, Int32(frames), &out) }
        }
        withExtendedLifetime(outputs) {}
        return (joined, newFrameHeight)
    }

    /// Converts to sRGB with 8 bits per band (through an embedded ICC profile when there is one),
    /// keeping alpha. CMYK and greyscale sources come out as 3-band sRGB.
    func normalisedToSRGB() throws(VipsFailure) -> VipsImageRef {
        var image = self
        let hasProfile = image.has("icc-profile-data")
        if image.interpretation == VIPS_INTERPRETATION_CMYK || (hasProfile && !image.hasSRGBProfile) {
            if let converted = image.cachedTransformToSRGB() {
                image = converted
            } else if hasProfile, let converted = try? image.apply({ osprey_icc_to_srgb($0, &$1) }) {
                image = converted
            }
        }
        if image.interpretation != VIPS_INTERPRETATION_sRGB || image.bands < 3 {
            image = try image.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
        }
        if image.bandFormat != VIPS_FORMAT_UCHAR {
            image = try image.apply { osprey_cast($0, Int32(VIPS_FORMAT_UCHAR.rawValue), &$1) }
        }
        if image.bands > 4 {
            image = try image.apply { osprey_extract_bands($0, 0, 4, &$1) }
        }
        return image
    }

    /// The image in sRGB through an lcms2 transform cached per profile (8-bit RGB(A) with an
    /// embedded profile, 8-bit CMYK(A) with an embedded or the fallback profile), rendered into
    /// memory; `nil` for other images or when the transform fails (callers then use libvips' own
    /// conversion, which builds a new transform each time).
    func cachedTransformToSRGB() -> VipsImageRef? {
        var out: UnsafeMutablePointer<VipsImage>?
        guard osprey_icc_to_srgb_cached(pointer, &out) == 0, let out else {
            vips_error_clear()
            return nil
        }
        return VipsImageRef(taking: out)
    }

    /// Whether the embedded ICC profile is an RGB profile describing itself as sRGB (the usual
    /// "sRGB IEC61966-2.1" of cameras and editors): converting through it to sRGB would change
    /// nothing but costs an lcms2 transform per image (a fifth of the CPU of small-image jobs in
    /// the benchmark), so such images are taken as sRGB already.
    var hasSRGBProfile: Bool {
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, "icc-profile-data", &data, &length) == 0, let data, length >= 128 else { return false }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        // Header: data colour space at offset 16 ("RGB ").
        guard bytes[16] == 0x52, bytes[17] == 0x47, bytes[18] == 0x42, bytes[19] == 0x20 else { return false }
        let marker: [UInt8] = Array("sRGB".utf8)
        let limit = min(length, 4096)
        var index = 128
        while index + marker.count <= limit {
            if bytes[index] == marker[0], bytes[index + 1] == marker[1], bytes[index + 2] == marker[2], bytes[index + 3] == marker[3] {
                return true
            }
            index += 1
        }
        return false
    }
}
