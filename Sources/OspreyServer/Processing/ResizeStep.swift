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
        /// ``fill`` when the image and the box are both landscape (or square) or both portrait,
        /// else ``fit`` (imgproxy `auto`).
        case auto
        /// ``fill``, except that an image too small for the box (without ``upscale``) is cropped to
        /// the box's aspect ratio rather than to the box (imgproxy `fill-down`).
        case fillDown = "fill-down"
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
    /// How far the ``Mode/fill`` crop moves from its ``gravity`` position, as imgproxy's
    /// `g:TYPE:X:Y`: away from the gravity's edge, or right/down for the centre; pixels (times
    /// ``dpr``) when 1 or more in magnitude, else a fraction of the resized image's width. Default 0.
    public var offsetX = 0.0
    /// See ``offsetX`` (a fraction of the resized image's height). Default 0.
    public var offsetY = 0.0
    /// Device pixel ratio: the box is multiplied by it, within ``upscale`` (imgproxy's `dpr`). Default 1.
    public var dpr = 1.0
    /// Whether an image smaller than the box is placed on a transparent canvas of the box's size
    /// (imgproxy's `extend`; the encoder flattens it onto white for JPEG). Default `false`.
    public var extend = false
    /// Where the image sits on the canvas of ``extend``. Default centre.
    public var extendGravity: ImageProcessors.Gravity = .center
    /// How far the image moves from its ``extendGravity`` position on the canvas, as ``offsetX``
    /// measures it (a fraction of the canvas' side below 1). Default 0.
    public var extendOffsetX = 0.0
    /// See ``extendOffsetX``. Default 0.
    public var extendOffsetY = 0.0
    /// Whether the result is placed on a transparent canvas of the box's aspect ratio, as small
    /// as holds it (imgproxy's `exar`). Default `false`.
    public var extendAspectRatio = false
    /// Where the result sits on the canvas of ``extendAspectRatio``. Default centre.
    public var extendAspectRatioGravity: ImageProcessors.Gravity = .center
    /// How far the result moves from its ``extendAspectRatioGravity`` position, as
    /// ``extendOffsetX``. Default 0.
    public var extendAspectRatioOffsetX = 0.0
    /// See ``extendAspectRatioOffsetX``. Default 0.
    public var extendAspectRatioOffsetY = 0.0
    /// Horizontal zoom: the scale (and the box) multiplied by it, within ``upscale`` (imgproxy's
    /// `z`). Default 1.
    public var zoomX = 1.0
    /// Vertical zoom; see ``zoomX``. Default 1.
    public var zoomY = 1.0
    /// The least width of the scaled image, the scale raised for it on both axes (imgproxy's
    /// `mw`; this may enlarge). Default 0: none.
    public var minWidth = 0
    /// The least height of the scaled image; see ``minWidth`` (imgproxy's `mh`). Default 0: none.
    public var minHeight = 0
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
        !sizesAlone && !flipHorizontally && !flipVertically
    }

    /// Whether anything but the flips changes the size: a box side, `orig`, zoom or a least size.
    private var sizesAlone: Bool {
        width != 0 || height != 0 || originalWidth || originalHeight || zoomX != 1 || zoomY != 1 || minWidth > 0 || minHeight > 0
    }

    public var identifier: String {
        let w = originalWidth ? "orig" : String(width), h = originalHeight ? "orig" : String(height)
        return "geometry:\(w)x\(h):\(mode.rawValue):\(upscale ? "up" : "noup"):\(smart ? "smart" : gravity.rawValue)"
            + (adaptive ? ":adaptive" : "") + (flipHorizontally ? ":fliph" : "") + (flipVertically ? ":flipv" : "")
            + focusIdentifier + Self.offsetIdentifier("offset", offsetX, offsetY)
            + (dpr != 1 ? ":dpr:\(identifierNumber(dpr))" : "")
            + (extend ? ":extend:\(extendGravity.rawValue)" + Self.offsetIdentifier("", extendOffsetX, extendOffsetY) : "")
            + (extendAspectRatio
                ? ":exar:\(extendAspectRatioGravity.rawValue)"
                    + Self.offsetIdentifier("", extendAspectRatioOffsetX, extendAspectRatioOffsetY) : "")
            + (zoomX != 1 || zoomY != 1 ? ":zoom:\(identifierNumber(zoomX)):\(identifierNumber(zoomY))" : "")
            + (minWidth > 0 || minHeight > 0 ? ":min:\(minWidth)x\(minHeight)" : "")
    }

    /// `:name:X:Y` (`:X:Y` without a name) unless both are 0.
    private static func offsetIdentifier(_ name: String, _ x: Double, _ y: Double) -> String {
        x == 0 && y == 0 ? "" : (name.isEmpty ? "" : ":\(name)") + ":\(identifierNumber(x)):\(identifierNumber(y))"
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
        let sized =
            width > 0 && height > 0 && !originalWidth && !originalHeight && !adaptive && zoomX == zoomY && minWidth == 0 && minHeight == 0
            && !extendAspectRatio && extendOffsetX == 0 && extendOffsetY == 0
        if sized {
            // With upscaling the device pixel ratio (and an even zoom) only multiplies the box (and
            // the result fills it); without, only a fit that does not extend is independent of the
            // source's size.
            let w = max(1, Int((Double(width) * dpr * zoomX).rounded())), h = max(1, Int((Double(height) * dpr * zoomY).rounded()))
            let canvas: [any ImageProcessing] = extend ? [ImageProcessors.Pad(width: w, height: h, background: .clear, gravity: extendGravity)] : []
            switch mode {
            case .fill where upscale && placedByGravity, .fillDown where upscale && placedByGravity:
                if smart { return [ImageProcessors.SmartResize(width: w, height: h)] + flips }
                if gravity == .center { return [ImageProcessors.Resize(width: w, height: h, contentMode: .fill)] + flips }
            case .fit where upscale: return [ImageProcessors.Resize(width: w, height: h, contentMode: .fit)] + canvas + flips
            case .fit where !extend: return [ImageProcessors.Downsample(width: w, height: h)] + flips
            case .force where upscale: return [ImageProcessors.Resize(width: w, height: h, contentMode: .stretch)] + flips
            default: break
            }
        }
        if !sizesAlone { return flips }
        var plain = self
        plain.flipHorizontally = false
        plain.flipVertically = false
        return [plain] + flips
    }

    /// The processors this step amounts to for a `sourceWidth` x `sourceHeight` image (flips
    /// excluded). The scale follows imgproxy's rule: shrink factors per axis tied by the mode, no
    /// axis enlarged without ``upscale`` (the forced aspect kept), the device pixel ratio within it.
    func concrete(sourceWidth: Int, sourceHeight: Int) -> [any ImageProcessing] {
        let w0 = Double(sourceWidth), h0 = Double(sourceHeight)
        var w = originalWidth ? w0 : Double(width), h = originalHeight ? h0 : Double(height)
        if adaptive, w > 0, h > 0, (w0 > h0) != (w > h) { swap(&w, &h) }
        guard w > 0 || h > 0 || zoomX != 1 || zoomY != 1 || minWidth > 0 || minHeight > 0, w0 > 0, h0 > 0 else { return [] }
        var mode = self.mode
        if mode == .auto { mode = (w0 >= h0) == ((w > 0 ? w : w0) >= (h > 0 ? h : h0)) ? .fill : .fit }
        var xShrink = w > 0 ? w0 / w : 1, yShrink = h > 0 ? h0 / h : 1
        if xShrink != 1 || yShrink != 1 {
            if w == 0 && mode != .force {
                xShrink = yShrink
            } else if h == 0 && mode != .force {
                yShrink = xShrink
            } else {
                switch mode {
                case .fit: (xShrink, yShrink) = (max(xShrink, yShrink), max(xShrink, yShrink))
                case .fill, .fillDown, .cover: (xShrink, yShrink) = (min(xShrink, yShrink), min(xShrink, yShrink))
                case .force, .auto: break
                }
            }
        }
        xShrink /= zoomX
        yShrink /= zoomY
        var ratio = dpr
        if !upscale {
            let least = min(xShrink, yShrink)
            if least < 1 {
                xShrink /= least
                yShrink /= least
                if !extend { ratio /= least }
            }
            ratio = min(ratio, xShrink, yShrink)
        }
        if minWidth > 0, w0 / Double(minWidth) < xShrink {
            yShrink /= xShrink / (w0 / Double(minWidth))
            xShrink = w0 / Double(minWidth)
        }
        if minHeight > 0, h0 / Double(minHeight) < yShrink {
            xShrink /= yShrink / (h0 / Double(minHeight))
            yShrink = h0 / Double(minHeight)
        }
        xShrink /= ratio
        yShrink /= ratio
        let scale = 1 / xShrink
        let scaledWidth = max(1, Int((w0 / xShrink).rounded())), scaledHeight = max(1, Int((h0 / yShrink).rounded()))
        let targetWidth = Int((w * ratio * zoomX).rounded()), targetHeight = Int((h * ratio * zoomY).rounded())
        var steps: [any ImageProcessing] = []
        if scaledWidth != sourceWidth || scaledHeight != sourceHeight {
            steps.append(ImageProcessors.Resize(width: scaledWidth, height: scaledHeight, contentMode: .stretch))
        }
        var (outWidth, outHeight) = (scaledWidth, scaledHeight)
        if mode == .fill || mode == .fillDown, targetWidth > 0, targetHeight > 0 {
            var cropWidth = min(scaledWidth, max(1, targetWidth)), cropHeight = min(scaledHeight, max(1, targetHeight))
            if mode == .fillDown && !upscale {
                // Too small for the box on a side: keep the box's aspect ratio instead.
                let wide = Double(targetWidth) / Double(scaledWidth), tall = Double(targetHeight) / Double(scaledHeight)
                if wide > tall && wide > 1 {
                    cropHeight = min(scaledHeight, max(1, Int((Double(scaledWidth) * Double(targetHeight) / Double(targetWidth)).rounded())))
                } else if tall > wide && tall > 1 {
                    cropWidth = min(scaledWidth, max(1, Int((Double(scaledHeight) * Double(targetWidth) / Double(targetHeight)).rounded())))
                }
            }
            if cropWidth < scaledWidth || cropHeight < scaledHeight {
                if smart && placedByGravity {
                    steps.append(ImageProcessors.SmartResize(width: cropWidth, height: cropHeight))
                } else if placedByGravity {
                    steps.append(ImageProcessors.Crop(width: cropWidth, height: cropHeight, gravity: gravity))
                } else {
                    let (x, y) = cropOrigin(scaled: (scaledWidth, scaledHeight), crop: (cropWidth, cropHeight), scale: scale, dpr: ratio)
                    steps.append(ImageProcessors.Crop(.rect(x: x, y: y, width: cropWidth, height: cropHeight)))
                }
                (outWidth, outHeight) = (cropWidth, cropHeight)
            }
        }
        if extend && (targetWidth > outWidth || targetHeight > outHeight) {
            let canvas = (max(targetWidth, outWidth), max(targetHeight, outHeight))
            steps.append(
                Self.canvas(canvas, around: (outWidth, outHeight), gravity: extendGravity, offset: (extendOffsetX, extendOffsetY), dpr: ratio))
        } else if extendAspectRatio, targetWidth > 0, targetHeight > 0 {
            // The smallest canvas of the box's aspect ratio that holds the result.
            let wide = Double(targetWidth) / Double(outWidth), tall = Double(targetHeight) / Double(outHeight)
            var canvas = (width: outWidth, height: outHeight)
            if tall > wide {
                canvas.height = Int((Double(outWidth) * Double(targetHeight) / Double(targetWidth)).rounded())
            } else if wide > tall {
                canvas.width = Int((Double(outHeight) * Double(targetWidth) / Double(targetHeight)).rounded())
            }
            if canvas.width > outWidth || canvas.height > outHeight {
                let offset = (extendAspectRatioOffsetX, extendAspectRatioOffsetY)
                steps.append(Self.canvas(canvas, around: (outWidth, outHeight), gravity: extendAspectRatioGravity, offset: offset, dpr: ratio))
            }
        }
        return steps
    }

    /// The top-left corner of a `crop` cut from the `scaled` image: centred on ``focus``, or placed
    /// by ``gravity`` and moved by the offsets (imgproxy's rule); kept inside the image.
    func cropOrigin(scaled: (width: Int, height: Int), crop: (width: Int, height: Int), scale: Double, dpr: Double) -> (Int, Int) {
        switch focus {
        case .region(let l, let t, let r, let b):
            let left = Int((Double(l + r) / 2 * scale).rounded()) - crop.width / 2
            let top = Int((Double(t + b) / 2 * scale).rounded()) - crop.height / 2
            return (min(max(0, left), scaled.width - crop.width), min(max(0, top), scaled.height - crop.height))
        case .point(let x, let y):
            return Self.origin(of: crop, in: scaled, point: (x, y))
        case nil:
            let offset = (x: Self.offsetPixels(offsetX, of: scaled.width, dpr: dpr), y: Self.offsetPixels(offsetY, of: scaled.height, dpr: dpr))
            return Self.origin(of: crop, in: scaled, gravity: gravity, offset: offset)
        }
    }

    /// An imgproxy gravity offset in pixels of an image side `side`: pixels times `dpr` when 1 or
    /// more in magnitude, else that fraction of `side` (its `calcPosition`, rounded half to even).
    static func offsetPixels(_ offset: Double, of side: Int, dpr: Double) -> Int {
        Int((abs(offset) >= 1 ? offset * dpr : offset * Double(side)).rounded(.toNearestOrEven))
    }

    /// The processor that places an `inner` image on a transparent `outer` canvas by `gravity`,
    /// moved by `offset` (as ``offsetPixels(_:of:dpr:)`` reads it): the library's pad when the
    /// offsets are 0, else the margins that put it there.
    static func canvas(
        _ outer: (width: Int, height: Int), around inner: (width: Int, height: Int), gravity: ImageProcessors.Gravity,
        offset: (x: Double, y: Double), dpr: Double
    ) -> any ImageProcessing {
        guard offset.x != 0 || offset.y != 0 else {
            return ImageProcessors.Pad(width: outer.width, height: outer.height, background: .clear, gravity: gravity)
        }
        let pixels = (x: offsetPixels(offset.x, of: outer.width, dpr: dpr), y: offsetPixels(offset.y, of: outer.height, dpr: dpr))
        let (x, y) = origin(of: inner, in: outer, gravity: gravity, offset: pixels)
        return PaddingStep(top: y, right: outer.width - inner.width - x, bottom: outer.height - inner.height - y, left: x)
    }

    /// imgproxy's placement of `inner` in `outer` (its `calcPosition`): centred on `point` (fractions
    /// of `outer`) when there is one, else by `gravity`, moved `offset` pixels away from the
    /// gravity's edges (right/down for the centre); kept inside `outer`.
    static func origin(
        of inner: (width: Int, height: Int), in outer: (width: Int, height: Int), gravity: ImageProcessors.Gravity = .center,
        offset: (x: Int, y: Int) = (0, 0), point: (x: Double, y: Double)? = nil
    ) -> (Int, Int) {
        var left: Int, top: Int
        if let point {
            left = Int((point.x * Double(outer.width)).rounded()) - inner.width / 2
            top = Int((point.y * Double(outer.height)).rounded()) - inner.height / 2
        } else {
            left = (outer.width - inner.width + 1) / 2 + offset.x
            top = (outer.height - inner.height + 1) / 2 + offset.y
            if [.top, .topLeft, .topRight].contains(gravity) { top = offset.y }
            if [.bottom, .bottomLeft, .bottomRight].contains(gravity) { top = outer.height - inner.height - offset.y }
            if [.left, .topLeft, .bottomLeft].contains(gravity) { left = offset.x }
            if [.right, .topRight, .bottomRight].contains(gravity) { left = outer.width - inner.width - offset.x }
        }
        return (min(max(0, left), outer.width - inner.width), min(max(0, top), outer.height - inner.height))
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
