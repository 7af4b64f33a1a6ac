import COspreyVips

extension Image {
    /// The pixels of one frame as the image holds them in memory, shared rather than copied: a
    /// toolkit can wrap them in its own texture (OspreyGTK makes a `GdkMemoryTexture` whose
    /// `GBytes` keeps ``owner`` alive), so showing a decoded image costs no copy.
    package struct PixelBuffer: @unchecked Sendable {
        // @unchecked: `base` points into an immutable buffer that `owner` (an Image's pixel
        // storage, never written after decoding) keeps alive; nothing writes through it.
        /// The first byte of the frame's first row.
        package let base: UnsafeRawPointer
        /// Bytes from the first row to the end of the last (`rowBytes * height`).
        package let count: Int
        /// Width in pixels.
        package let width: Int
        /// Height in pixels.
        package let height: Int
        /// Bytes per pixel: 3 (RGB) or 4 (RGBA, not premultiplied), 8 bits each, sRGB.
        package let bands: Int
        /// Bytes from one row to the next.
        package let rowBytes: Int
        /// Keeps the memory alive; hold it (retain it) as long as ``base`` is used.
        package let owner: AnyObject
    }

    /// The pixels of frame `frame` (default 0, the first) without a copy, or `nil` when the image
    /// does not hold 8-bit RGB or RGBA pixels in memory (a grey image, say) or `frame` is out of
    /// range; use ``rgbaPixels()`` then.
    package func pixelBuffer(frame: Int = 0) -> PixelBuffer? {
        let storage = self.storage
        guard frame >= 0, frame < frameCount, storage.isMaterialised, storage.bandFormat == VIPS_FORMAT_UCHAR,
            storage.bands == 3 || storage.bands == 4, let data = vips_image_get_data(storage.pointer)
        else { return nil }
        let rowBytes = storage.width * storage.bands
        return PixelBuffer(
            base: UnsafeRawPointer(data) + frame * height * rowBytes, count: rowBytes * height, width: width, height: height,
            bands: storage.bands, rowBytes: rowBytes, owner: storage)
    }
}
