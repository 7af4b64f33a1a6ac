import Osprey

/// imgproxy's `c:W:H[:gravity[:X:Y]]`: a crop of the source before any resize. Each side is in
/// pixels (1 or more), a fraction of the source's side (below 1), or the whole side (0); the crop
/// is placed by gravity and moved by offsets, centred on a focus point, as imgproxy's
/// `calcPosition` places it, or placed by libvips' attention measure (`sm`). The size depends on
/// the source's, so the step runs as its own ``process(_:)`` (through a fixed
/// ``ImageProcessors/Crop`` when both sides are whole pixels and it is placed by gravity alone).
public struct CropStep: ImageProcessing, Hashable {
    /// The crop's width: pixels (≥ 1), a fraction of the source's (< 1), or all of it (0). Default 0.
    public var width = 0.0
    /// The crop's height, as ``width``. Default 0.
    public var height = 0.0
    /// Where the crop sits. Default centre.
    public var gravity: ImageProcessors.Gravity = .center
    /// How far the crop moves away from the gravity's left/right edge (right for the centre):
    /// pixels when 1 or more in magnitude, else a fraction of the source's width. Default 0.
    public var offsetX = 0.0
    /// How far the crop moves away from the gravity's top/bottom edge (down for the centre), as
    /// ``offsetX`` (a fraction of the source's height). Default 0.
    public var offsetY = 0.0
    /// Whether libvips' attention measure places the crop (imgproxy's `sm` gravity) instead of the
    /// gravity, offsets and focus point. Default `false`.
    public var smart = false
    /// A point in fractions (0...1) of the source the crop centres on, instead of the gravity.
    /// Default `nil`.
    public var focusX: Double?
    /// See ``focusX``. Default `nil`.
    public var focusY: Double?

    /// A crop with every default: the whole image.
    public init() {}

    /// The stable identifier; see ``ImageProcessing/identifier``.
    public var identifier: String {
        "imgproxy-crop:\(identifierNumber(width))x\(identifierNumber(height)):"
            + (smart
                ? "sm"
                : focusX.map { "fp:\(identifierNumber($0)):\(identifierNumber(focusY ?? 0.5))" }
                    ?? "\(gravity.rawValue):\(identifierNumber(offsetX)):\(identifierNumber(offsetY))")
    }

    /// The processor this step is where it does not depend on the source's size, else itself.
    var fixed: any ImageProcessing {
        let whole = { (side: Double) in side == 0 || (side >= 1 && side == side.rounded()) }
        guard whole(width), whole(height), !smart, focusX == nil, offsetX == 0, offsetY == 0 else { return self }
        return ImageProcessors.Crop(
            width: width == 0 ? 1 << 20 : Int(width), height: height == 0 ? 1 << 20 : Int(height), gravity: gravity)
    }

    /// The crop's side of a source side `side` (imgproxy's `CalcCropSize`).
    static func side(_ value: Double, of side: Int) -> Int {
        switch value {
        case 0: side
        case 1...: min(side, Int(value))
        default: min(side, max(1, Int((Double(side) * value).rounded())))
        }
    }

    /// The rectangle cut from a `width` x `height` source.
    func rectangle(width sourceWidth: Int, height sourceHeight: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let inner = (width: Self.side(width, of: sourceWidth), height: Self.side(height, of: sourceHeight))
        let point = focusX.map { ($0, focusY ?? 0.5) }
        let offset = (
            x: ResizeStep.offsetPixels(offsetX, of: sourceWidth, dpr: 1), y: ResizeStep.offsetPixels(offsetY, of: sourceHeight, dpr: 1)
        )
        let (x, y) = ResizeStep.origin(of: inner, in: (sourceWidth, sourceHeight), gravity: gravity, offset: offset, point: point)
        return (x, y, inner.width, inner.height)
    }

    /// Cuts the rectangle out of `image`, or with ``smart``, an area of its size where libvips'
    /// attention measure points.
    public func process(_ image: Image) throws(OspreyError) -> Image {
        let rect = rectangle(width: image.width, height: image.height)
        if smart { return try ImageProcessors.SmartCrop(width: rect.width, height: rect.height).process(image) }
        return try ImageProcessors.Crop(.rect(x: rect.x, y: rect.y, width: rect.width, height: rect.height)).process(image)
    }
}
