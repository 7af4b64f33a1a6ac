import Osprey

/// Where and how imgproxy's `wm:OPACITY:POSITION:X:Y:SCALE` draws the configured watermark.
public struct ImgproxyWatermarkPlacement: Sendable, Hashable {
    /// Where the watermark sits; ignored when ``replicate`` is set. Default centre.
    public var gravity: ImageProcessors.Gravity = .center
    /// Whether the watermark is tiled over the whole image (imgproxy's `re` position). Default `false`.
    public var replicate = false
    /// Offsets from the position (or, tiled, the space between tiles): pixels when 1 or more
    /// (times ``dpr``), else a fraction of the image's side. Default 0.
    public var offsetX = 0.0
    /// See ``offsetX``. Default 0.
    public var offsetY = 0.0
    /// The watermark fitted into this share of the image's width and height, enlarged or reduced;
    /// 0 keeps its size. Default 0.
    public var scale = 0.0
    /// The URL's device pixel ratio, which pixel offsets are multiplied by. Default 1.
    public var dpr = 1.0

    /// A placement with every default: centred, unscaled.
    public init() {}

    var identifier: String {
        "\(replicate ? "re" : gravity.rawValue):\(identifierNumber(offsetX)):\(identifierNumber(offsetY)):\(identifierNumber(scale)):\(identifierNumber(dpr))"
    }

    /// An offset in pixels of an image side `side`.
    func pixels(_ offset: Double, of side: Int) -> Int {
        ResizeStep.offsetPixels(offset, of: side, dpr: dpr)
    }
}

/// imgproxy's watermark: `mark` fitted to ``ImgproxyWatermarkPlacement/scale`` of the image, then
/// placed by gravity and offsets as imgproxy's `calcPosition` places it (kept inside the image),
/// or tiled with the offsets as the space between tiles, drawn at `transparency` percent.
struct WatermarkStep: ImageProcessing {
    let mark: Image
    let name: String
    let placement: ImgproxyWatermarkPlacement
    /// 0 (opaque) ... 100 (invisible).
    let transparency: Int

    var identifier: String { "imgproxy-watermark:\(name):\(placement.identifier):\(transparency)" }

    func process(_ image: Image) throws(OspreyError) -> Image {
        var mark = self.mark
        if placement.scale > 0 {
            let width = max(1, Int((Double(image.width) * placement.scale).rounded()))
            let height = max(1, Int((Double(image.height) * placement.scale).rounded()))
            mark = try ImageProcessors.Resize(width: width, height: height, contentMode: .fit).process(mark)
        }
        let offset = (x: placement.pixels(placement.offsetX, of: image.width), y: placement.pixels(placement.offsetY, of: image.height))
        if placement.replicate {
            if offset.x > 0 || offset.y > 0 {
                mark = try ImageProcessors.Pad(width: mark.width + max(0, offset.x), height: mark.height + max(0, offset.y), background: .clear)
                    .process(mark)
            }
            return try ImageProcessors.Watermark(mark: mark, name: name, x: .repeat, y: .repeat, transparency: transparency).process(image)
        }
        let (left, top) = ResizeStep.origin(
            of: (mark.width, mark.height), in: (image.width, image.height), gravity: placement.gravity, offset: offset)
        return try ImageProcessors.Watermark(mark: mark, name: name, x: .pixels(left), y: .pixels(top), transparency: transparency)
            .process(image)
    }
}
