import COspreyVips

extension ImageProcessors {
    /// Rotates each frame clockwise by a multiple of 90°. Identifier `rotate:D`. Keeps animation frames.
    package struct Rotate: FrameProcessor {
        /// Clockwise degrees: 0, 90, 180 or 270 (other multiples of 90 are reduced modulo 360).
        package let degrees: Int

        /// A clockwise rotation by `degrees`, a multiple of 90.
        package init(degrees: Int) {
            self.degrees = degrees
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String { "rotate:\(((degrees % 360) + 360) % 360)" }

        func validate(for image: Image) throws(OspreyError) {
            guard degrees % 90 == 0 else { throw invalid("\(degrees)° is not a multiple of 90") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let angle: VipsAngle
            switch ((degrees % 360) + 360) % 360 {
            case 90: angle = VIPS_ANGLE_D90
            case 180: angle = VIPS_ANGLE_D180
            case 270: angle = VIPS_ANGLE_D270
            default: return frame
            }
            return try frame.apply { osprey_rot($0, Int32(angle.rawValue), &$1) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Rotates each frame clockwise by a multiple of 90°. Identifier `rotate:D`. Keeps animation frames.
    ///
    /// The processor clockwise by `degrees` (a multiple of 90).
    public static func rotate(degrees: Int) -> Self { Self([ImageProcessors.Rotate(degrees: degrees)]) }
}
