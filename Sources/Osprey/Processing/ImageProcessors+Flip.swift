import COspreyVips

extension ImageProcessors {
    /// Mirrors each frame. Identifier `flip:h`, `flip:v` or `flip:hv`. Keeps animation frames.
    public struct Flip: FrameProcessor {
        /// Mirror left-to-right.
        public let horizontal: Bool
        /// Mirror top-to-bottom.
        public let vertical: Bool

        /// A flip; at least one of `horizontal` (default `true`) and `vertical` (default `false`).
        public init(horizontal: Bool = true, vertical: Bool = false) {
            self.horizontal = horizontal
            self.vertical = vertical
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        public var identifier: String { "flip:" + (horizontal ? "h" : "") + (vertical ? "v" : "") }

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

extension ImageProcessing where Self == ImageProcessors.Flip {
    /// ``ImageProcessors/Flip`` (default horizontal).
    public static func flip(horizontal: Bool = true, vertical: Bool = false) -> Self { .init(horizontal: horizontal, vertical: vertical) }
}
