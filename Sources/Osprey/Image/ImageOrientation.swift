/// The EXIF orientation a source image declared (tag 0x0112, values 1...8).
///
/// With ``DecodingOptions/autoOrient`` on (the default) the pixels of a decoded ``Image`` are
/// already upright and this value only records what the source said.
public enum ImageOrientation: Int, Sendable, Hashable, Codable {
    /// 1: no transform.
    case up = 1
    /// 2: mirrored horizontally.
    case upMirrored = 2
    /// 3: rotated 180°.
    case down = 3
    /// 4: mirrored vertically.
    case downMirrored = 4
    /// 5: mirrored horizontally, then rotated 90° anticlockwise.
    case leftMirrored = 5
    /// 6: needs a 90° clockwise rotation to display.
    case right = 6
    /// 7: mirrored horizontally, then rotated 90° clockwise.
    case rightMirrored = 7
    /// 8: needs a 90° anticlockwise rotation to display.
    case left = 8

    /// Whether displaying the image swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }
}
