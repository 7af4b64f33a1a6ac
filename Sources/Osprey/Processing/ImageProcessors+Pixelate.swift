import COspreyVips

extension ImageProcessors {
    /// Pixelates: each `size` x `size` block becomes its mean colour (alpha too), blocks counted
    /// from the top-left corner; the last row and column of blocks average the image mirrored
    /// past its edge, as imgproxy's `pix` does. The size stays. Identifier `pixelate:N`. Keeps
    /// animation frames.
    package struct Pixelate: FrameProcessor {
        /// The side of a block in pixels; 1 (or less) changes nothing.
        package let size: Int

        /// Blocks of `size` pixels a side.
        package init(size: Int) {
            self.size = size
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "pixelate:\(size)" }

        func keepsFrame(width: Int, height: Int) -> Bool { size <= 1 }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let (width, height) = (frame.width, frame.height)
            // Larger than the image: one block of the whole.
            let block = min(size, max(width, height))
            let (paddedWidth, paddedHeight) = ((width + block - 1) / block * block, (height + block - 1) / block * block)
            var image = frame
            if paddedWidth > width || paddedHeight > height {
                image = try image.apply { osprey_embed_mirror($0, Int32(paddedWidth), Int32(paddedHeight), &$1) }
            }
            image = try image.apply { osprey_shrink($0, Double(block), Double(block), &$1) }
            image = try image.apply { osprey_zoom($0, Int32(block), Int32(block), &$1) }
            if paddedWidth > width || paddedHeight > height {
                image = try image.apply { osprey_extract_area($0, 0, 0, Int32(width), Int32(height), &$1) }
            }
            return image
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Pixelates: each `size` x `size` block becomes its mean colour (alpha too), blocks counted
    /// from the top-left corner; the last row and column of blocks average the image mirrored
    /// past its edge, as imgproxy's `pix` does. The size stays. Identifier `pixelate:N`. Keeps
    /// animation frames.
    ///
    /// The processor with blocks of `size` pixels.
    public static func pixelate(_ size: Int) -> Self { Self([ImageProcessors.Pixelate(size: size)]) }
}
