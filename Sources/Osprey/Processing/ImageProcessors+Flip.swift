import COspreyVips

extension ImageProcessors {
    /// Mirrors each frame. Identifier `flip:h`, `flip:v` or `flip:hv`. Keeps animation frames.
    package struct Flip: FrameProcessor {
        /// Mirror left-to-right.
        package let horizontal: Bool
        /// Mirror top-to-bottom.
        package let vertical: Bool

        /// A flip; at least one of `horizontal` (default `true`) and `vertical` (default `false`).
        package init(horizontal: Bool = true, vertical: Bool = false) {
            self.horizontal = horizontal
            self.vertical = vertical
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "flip:" + (horizontal ? "h" : "") + (vertical ? "v" : "") }

        func validate(for image: Image) throws(OspreyError) {
            guard horizontal || vertical else { throw invalid("choose horizontal, vertical or both") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            var current = frame
            if horizontal { current = try current.apply { osprey_flip($0, Int32(VIPS_DIRECTION_HORIZONTAL.rawValue), &$1) } }
            if vertical { current = try current.apply { osprey_flip($0, Int32(VIPS_DIRECTION_VERTICAL.rawValue), &$1) } }
            return current
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Mirrors each frame. Identifier `flip:h`, `flip:v` or `flip:hv`. Keeps animation frames.
    ///
    /// The processor(default horizontal).
    public static func flip(horizontal: Bool = true, vertical: Bool = false) -> Self {
        Self([ImageProcessors.Flip(horizontal: horizontal, vertical: vertical)])
    }
}
