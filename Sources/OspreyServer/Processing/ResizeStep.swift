import Osprey

/// The resize both URL grammars ask for, in one model: a target box, how the image goes into it,
/// where a crop sits, and flips. ``processors`` turns it into the library's processors, using
/// ``ImageProcessors/Resize`` / ``ImageProcessors/Downsample`` directly whenever the step does not
/// depend on the source's size (so the pipeline can plan its decode from it), and this type's own
/// ``process(_:)`` only for proportional (`0`), `orig` and gravity-placed sizes.
public struct ResizeStep: ImageProcessing, Hashable {
    /// How the image goes into the box.
    public enum Mode: String, Sendable, Hashable {
        /// Scale to cover the box, then crop to it (thumbor's default, imgproxy `fill`).
        case fill
        /// Scale to fit inside the box (thumbor `fit-in`, imgproxy `fit`).
        case fit
        /// Scale so that the box fits inside the image: the smaller side fits (thumbor `full-fit-in`).
        case cover
        /// Scale each axis to the box (imgproxy `force`).
        case force
    }

    /// Target width; `0` follows the height proportionally. Default 0.
    public var width = 0
    /// Target height; `0` follows the width proportionally. Default 0.
    public var height = 0
    /// Take the width from the source (thumbor `orig`). Default `false`.
    public var originalWidth = false
    /// Take the height from the source (thumbor `orig`). Default `false`.
    public var originalHeight = false
    /// Default ``Mode/fill``.
    public var mode: Mode = .fill
    /// Whether the image may be scaled up. Default `true` (thumbor); imgproxy's default is `false`.
    public var upscale = true
    /// Where the crop of ``Mode/fill`` sits. Default centre.
    public var gravity: ImageProcessors.Gravity = .center
    /// libvips' attention-based crop instead of ``gravity``. Default `false`.
    public var smart = false
    /// thumbor's `adaptive-fit-in`: the box is turned when the image's orientation differs from
    /// it. Default `false`.
    public var adaptive = false
    /// What a ``Mode/fill`` crop centres on instead of ``gravity``. Default `nil`.
    public var focus: Focus?
    /// Pixels (of the resized image) the ``Mode/fill`` crop moves from its ``gravity`` position,
    /// as imgproxy's `g:TYPE:X:Y`: away from the gravity's edge, or right/down for the centre. Default 0.
    public var offsetX = 0
    /// See ``offsetX``. Default 0.
    public var offsetY = 0
    /// Mirror left-right (thumbor's negative width). Default `false`.
    public var flipHorizontally = false
    /// Mirror top-bottom (thumbor's negative height). Default `false`.
    public var flipVertically = false

    /// A point a crop centres on.
    public enum Focus: Sendable, Hashable {
        /// The centre of a region of the source, in source pixels (thumbor's `focal`).
        case region(left: Int, top: Int, right: Int, bottom: Int)
        /// A point in fractions (0...1) of the source's width and height (imgproxy's `g:fp:X:Y`).
        case point(x: Double, y: Double)
    }

    /// A step with every default: no resize at all.
    public init() {}

    /// Whether the step changes nothing.
    public var isIdentity: Bool {
        width == 0 && height == 0 && !originalWidth && !originalHeight && !flipHorizontally && !flipVertically
    }

    public var identifier: String {
        let w = originalWidth ? "orig" : String(width), h = originalHeight ? "orig" : String(height)
        return "geometry:\(w)x\(h):\(mode.rawValue):\(upscale ? "up" : "noup"):\(smart ? "smart" : gravity.rawValue)"
            + (adaptive ? ":adaptive" : "") + (flipHorizontally ? ":fliph" : "") + (flipVertically ? ":flipv" : "")
            + focusIdentifier + (offsetX != 0 || offsetY != 0 ? ":offset:\(offsetX):\(offsetY)" : "")
    }

    private var focusIdentifier: String {
        switch focus {
        case nil: ""
        case .region(let left, let top, let right, let bottom): ":focal:\(left)x\(top):\(right)x\(bottom)"
        case .point(let x, let y): ":fp:\(identifierNumber(x)):\(identifierNumber(y))"
        }
    }

    /// Whether the crop of ``Mode/fill`` is placed by ``gravity`` alone.
    private var placedByGravity: Bool { focus == nil && offsetX == 0 && offsetY == 0 }

    /// The library processors for this step, first the resize.
    public var processors: [any ImageProcessing] {
        guard !isIdentity else { return [] }
        let flips: [any ImageProcessing] =
            flipHorizontally || flipVertically
            ? [ImageProcessors.Flip(horizontal: flipHorizontally, vertical: flipVertically)] : []
        let sized = width > 0 && height > 0 && !originalWidth && !originalHeight && !adaptive
        if sized {
            switch mode {
            case .fill where smart && upscale && placedByGravity: return [ImageProcessors.SmartResize(width: width, height: height)] + flips
            case .fill where gravity == .center && upscale && placedByGravity:
                return [ImageProcessors.Resize(width: width, height: height, contentMode: .fill)] + flips
            case .fit where upscale: return [ImageProcessors.Resize(width: width, height: height, contentMode: .fit)] + flips
            case .fit: return [ImageProcessors.Downsample(width: width, height: height)] + flips
            case .force: return [ImageProcessors.Resize(width: width, height: height, contentMode: .stretch)] + flips
            default: break
            }
        }
        if width == 0 && height == 0 && !originalWidth && !originalHeight { return flips }
        var plain = self
        plain.flipHorizontally = false
        plain.flipVertically = false
        return [plain] + flips
    }

    /// The processors this step amounts to for a `sourceWidth` x `sourceHeight` image (flips excluded).
    func concrete(sourceWidth: Int, sourceHeight: Int) -> [any ImageProcessing] {
        let w0 = Double(sourceWidth), h0 = Double(sourceHeight)
        var w = originalWidth ? w0 : Double(width), h = originalHeight ? h0 : Double(height)
        if adaptive, w > 0, h > 0, (w0 > h0) != (w > h) { swap(&w, &h) }
        guard w > 0 || h > 0, w0 > 0, h0 > 0 else { return [] }
        let sx = w / w0, sy = h / h0
        var scale: Double
        if w == 0 {
            scale = sy
        } else if h == 0 {
            scale = sx
        } else {
            switch mode {
            case .fit: scale = min(sx, sy)
            case .fill, .cover: scale = max(sx, sy)
            case .force:
                let fw = upscale ? w : min(w, w0), fh = upscale ? h : min(h, h0)
                return [ImageProcessors.Resize(width: max(1, Int(fw.rounded())), height: max(1, Int(fh.rounded())), contentMode: .stretch)]
            }
        }
        if !upscale { scale = min(scale, 1) }
        let scaledWidth = max(1, Int((w0 * scale).rounded())), scaledHeight = max(1, Int((h0 * scale).rounded()))
        var steps: [any ImageProcessing] = []
        if scaledWidth != sourceWidth || scaledHeight != sourceHeight {
            steps.append(ImageProcessors.Resize(width: scaledWidth, height: scaledHeight, contentMode: .stretch))
        }
        if mode == .fill, w > 0, h > 0 {
            let cropWidth = min(scaledWidth, max(1, Int(w.rounded()))), cropHeight = min(scaledHeight, max(1, Int(h.rounded())))
            if cropWidth < scaledWidth || cropHeight < scaledHeight {
                if smart && placedByGravity {
                    steps.append(ImageProcessors.SmartResize(width: cropWidth, height: cropHeight))
                } else if placedByGravity {
                    steps.append(ImageProcessors.Crop(width: cropWidth, height: cropHeight, gravity: gravity))
                } else {
                    let (x, y) = cropOrigin(scaled: (scaledWidth, scaledHeight), crop: (cropWidth, cropHeight), scale: scale)
                    steps.append(ImageProcessors.Crop(.rect(x: x, y: y, width: cropWidth, height: cropHeight)))
                }
            }
        }
        return steps
    }

    /// The top-left corner of a `crop` cut from the `scaled` image: centred on ``focus``, or placed
    /// by ``gravity`` and moved by the offsets (imgproxy's rule); kept inside the image.
    func cropOrigin(scaled: (width: Int, height: Int), crop: (width: Int, height: Int), scale: Double) -> (Int, Int) {
        var left: Int, top: Int
        switch focus {
        case .region(let l, let t, let r, let b):
            left = Int((Double(l + r) / 2 * scale).rounded()) - crop.width / 2
            top = Int((Double(t + b) / 2 * scale).rounded()) - crop.height / 2
        case .point(let x, let y):
            left = Int((x * Double(scaled.width)).rounded()) - crop.width / 2
            top = Int((y * Double(scaled.height)).rounded()) - crop.height / 2
        case nil:
            left = (scaled.width - crop.width + 1) / 2 + offsetX
            top = (scaled.height - crop.height + 1) / 2 + offsetY
            if [.top, .topLeft, .topRight].contains(gravity) { top = offsetY }
            if [.bottom, .bottomLeft, .bottomRight].contains(gravity) { top = scaled.height - crop.height - offsetY }
            if [.left, .topLeft, .bottomLeft].contains(gravity) { left = offsetX }
            if [.right, .topRight, .bottomRight].contains(gravity) { left = scaled.width - crop.width - offsetX }
        }
        return (min(max(0, left), scaled.width - crop.width), min(max(0, top), scaled.height - crop.height))
    }

    /// Runs the step on `image` (the size-dependent cases of ``processors``).
    public func process(_ image: Image) throws(OspreyError) -> Image {
        var current = image
        for step in concrete(sourceWidth: image.width, sourceHeight: image.height) { current = try step.process(current) }
        if flipHorizontally || flipVertically {
            current = try ImageProcessors.Flip(horizontal: flipHorizontally, vertical: flipVertically).process(current)
        }
        return current
    }

    public static func == (lhs: ResizeStep, rhs: ResizeStep) -> Bool { lhs.identifier == rhs.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
