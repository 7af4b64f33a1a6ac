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
        if image.has("icc-profile-data"), let converted = try? image.apply({ osprey_icc_to_srgb($0, &$1) }) {
            image = converted
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
}
