import Foundation
import Osprey

/// The processing options of one imgproxy URL, applied one `name:arg:arg` at a time.
struct ImgproxyOptions {
    /// `rt`: imgproxy's resizing type; `cover` (thumbor's `full-fit-in`) has no imgproxy name.
    var resizingType: ResizeStep.Mode = .fit
    var width = 0
    var height = 0
    var enlarge = false
    var gravity: ImageProcessors.Gravity = .center
    /// `g`'s offsets: pixels when 1 or more in magnitude, else fractions of the side.
    var gravityOffset = (x: 0.0, y: 0.0)
    var focusPoint: (x: Double, y: Double)?
    var smart = false
    /// `c`: the crop, and whether it named its own gravity (else it takes `g`'s).
    var crop: (step: CropStep, placed: Bool)?
    var quality: Int?
    var format: ImageFormat?
    var blur: Double?
    var sharpen: Double?
    var expires: TimeInterval?
    /// `t`: the trim, `nil` when off.
    var trim: ImageProcessors.Trim?
    var dpr = 1.0
    var extend = false
    var extendGravity: ImageProcessors.Gravity = .center
    var extendOffset = (x: 0.0, y: 0.0)
    var background: RGBAColor?
    var rotation = 0
    var maxBytes: Int?
    /// `pd`: top, right, bottom, left.
    var padding = (top: 0, right: 0, bottom: 0, left: 0)
    var extendAspectRatio = false
    var extendAspectRatioGravity: ImageProcessors.Gravity = .center
    var extendAspectRatioOffset = (x: 0.0, y: 0.0)
    var zoom = (x: 1.0, y: 1.0)
    var minWidth = 0
    var minHeight = 0
    var flip = (horizontal: false, vertical: false)
    var pixelate = 0
    /// `fn`: the stem of the `Content-Disposition` file name.
    var filename: String?
    /// `att`: `Content-Disposition: attachment` instead of `inline`.
    var attachment = false
    /// `f:best`: the smallest of the formats the client accepts.
    var bestFormat = false
    /// `fq`: quality per output format.
    var formatQuality: [ImageFormat: Int] = [:]
    /// `skp`: source formats answered unprocessed.
    var skipProcessing: Set<ImageFormat> = []
    /// `raw`: the source answered as it is, whatever its format and the URL's.
    var raw = false
    /// `wm`: the configured watermark's opacity (0...1) and placement.
    var watermark: (opacity: Double, placement: ImgproxyWatermarkPlacement)?

    /// The sides a size option takes, in pixels; the box times `dpr` stays within them too.
    static let sides = 0...16384

    /// Applies one option; 400 for unknown options and bad arguments.
    mutating func apply(_ option: String) throws(ServerError) {
        let parts = option.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        let arguments = Array(parts.dropFirst())
        func int(_ index: Int, in range: ClosedRange<Int>) throws(ServerError) -> Int? {
            guard index < arguments.count, !arguments[index].isEmpty else { return nil }
            guard let value = Int(arguments[index]) else { throw .badRequest("imgproxy option \(name): \"\(arguments[index])\" is not an integer") }
            guard range.contains(value) else {
                throw .badRequest("imgproxy option \(name): \(value) is outside \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        func double(_ index: Int, in range: ClosedRange<Double>) throws(ServerError) -> Double? {
            guard index < arguments.count, !arguments[index].isEmpty else { return nil }
            guard let value = Double(arguments[index]), range.contains(value) else {
                throw .badRequest("imgproxy option \(name): \"\(arguments[index])\" is not a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        func bool(_ index: Int) throws(ServerError) -> Bool? {
            guard index < arguments.count, !arguments[index].isEmpty else { return nil }
            switch arguments[index].lowercased() {
            case "1", "t", "true": return true
            case "0", "f", "false": return false
            default: throw .badRequest("imgproxy option \(name): \"\(arguments[index])\" is not a boolean")
            }
        }
        /// A gravity's offsets at `index` and after it (0 when absent).
        func offsets(_ index: Int) throws(ServerError) -> (x: Double, y: Double) {
            let side = Double(Self.sides.upperBound)
            return (try double(index, in: -side...side) ?? 0, try double(index + 1, in: -side...side) ?? 0)
        }
        /// The gravity at `index` and its offsets, of `ex`/`exar` and the extend of `rs`/`s` (`nil`: unchanged).
        func extensionGravity(_ index: Int = 1) throws(ServerError) -> (ImageProcessors.Gravity, (x: Double, y: Double))? {
            guard arguments.count > index, !arguments[index].isEmpty else { return nil }
            return (try Self.gravity(arguments[index]), try offsets(index + 1))
        }
        func type(_ index: Int) throws(ServerError) {
            guard index < arguments.count, !arguments[index].isEmpty else { return }
            guard let mode = ResizeStep.Mode(rawValue: arguments[index]), mode != .cover else {
                throw .badRequest("imgproxy option \(name): resizing type \"\(arguments[index])\" is not fit, fill, fill-down, force or auto")
            }
            resizingType = mode
        }
        let side = Self.sides
        switch name {
        case "rs", "resize":
            try type(0)
            width = try int(1, in: side) ?? width
            height = try int(2, in: side) ?? height
            enlarge = try bool(3) ?? enlarge
            extend = try bool(4) ?? extend
            if let (gravity, offset) = try extensionGravity(5) { (extendGravity, extendOffset) = (gravity, offset) }
        case "s", "size":
            width = try int(0, in: side) ?? width
            height = try int(1, in: side) ?? height
            enlarge = try bool(2) ?? enlarge
            extend = try bool(3) ?? extend
            if let (gravity, offset) = try extensionGravity(4) { (extendGravity, extendOffset) = (gravity, offset) }
        case "rt", "resizing_type": try type(0)
        case "w", "width": width = try int(0, in: side) ?? 0
        case "h", "height": height = try int(0, in: side) ?? 0
        case "el", "enlarge": enlarge = try bool(0) ?? false
        case "ex", "extend":
            extend = try bool(0) ?? false
            if let (gravity, offset) = try extensionGravity() { (extendGravity, extendOffset) = (gravity, offset) }
        case "exar", "extend_ar", "extend_aspect_ratio":
            extendAspectRatio = try bool(0) ?? false
            if let (gravity, offset) = try extensionGravity() { (extendAspectRatioGravity, extendAspectRatioOffset) = (gravity, offset) }
        case "z", "zoom":
            guard let x = try double(0, in: 0...100), x > 0 else { throw .badRequest("imgproxy option \(name) needs a number in 0...100 above 0") }
            let y = try double(1, in: 0...100) ?? x
            guard y > 0 else { throw .badRequest("imgproxy option \(name) needs a number in 0...100 above 0") }
            zoom = (x, y)
        case "mw", "min-width", "min_width": minWidth = try int(0, in: side) ?? 0
        case "mh", "min-height", "min_height": minHeight = try int(0, in: side) ?? 0
        case "fl", "flip":
            flip = (try bool(0) ?? false, try bool(1) ?? false)
        case "pix", "pixelate": pixelate = try int(0, in: 0...side.upperBound) ?? 0
        case "fn", "filename":
            guard let text = arguments.first, !text.isEmpty else { throw .badRequest("imgproxy option \(name) needs a file name") }
            if try bool(1) == true {
                guard let data = Base64URL.decode(text), let decoded = String(data: data, encoding: .utf8) else {
                    throw .badRequest("imgproxy option \(name): \"\(text)\" is not URL-safe base64")
                }
                filename = decoded
            } else {
                filename = text.removingPercentEncoding ?? text
            }
        case "att", "return_attachment": attachment = try bool(0) ?? false
        case "raw": raw = try bool(0) ?? false
        case "msr", "max_src_resolution", "msfs", "max_src_file_size", "maf", "max_animation_frames", "mafr",
            "max_animation_frame_resolution", "mrd", "max_result_dimension":
            // imgproxy refuses them too unless IMGPROXY_ALLOW_SECURITY_OPTIONS: limits are the server's.
            throw .forbidden("imgproxy security option \(name) is not allowed: the limits are the server's (osprey serve --help)")
        case "wm", "watermark":
            // wm:OPACITY[:POSITION[:X:Y[:SCALE]]]
            guard let opacity = try double(0, in: 0...1) else { throw .badRequest("imgproxy option \(name) needs an opacity in 0...1") }
            var placement = ImgproxyWatermarkPlacement()
            if arguments.count > 1, !arguments[1].isEmpty {
                if arguments[1] == "re" { placement.replicate = true } else { placement.gravity = try Self.gravity(arguments[1]) }
            }
            placement.offsetX = try double(2, in: -Double(side.upperBound)...Double(side.upperBound)) ?? 0
            placement.offsetY = try double(3, in: -Double(side.upperBound)...Double(side.upperBound)) ?? 0
            placement.scale = try double(4, in: 0...100) ?? 0
            watermark = (opacity, placement)
        case "skp", "skip_processing":
            for argument in arguments where !argument.isEmpty {
                guard let format = ImageFormat(name: argument.lowercased()) else {
                    throw .badRequest("imgproxy option \(name): \"\(argument)\" is not an image format")
                }
                skipProcessing.insert(format)
            }
        case "fq", "format_quality":
            guard arguments.count % 2 == 0, !arguments.isEmpty else { throw .badRequest("imgproxy option \(name) needs format:quality pairs") }
            for index in stride(from: 0, to: arguments.count, by: 2) {
                guard let format = ImageFormat(name: arguments[index].lowercased()) else {
                    throw .badRequest("imgproxy option \(name): \"\(arguments[index])\" is not an image format")
                }
                formatQuality[format] = try int(index + 1, in: 0...100).flatMap { $0 == 0 ? nil : $0 }
            }
        case "dpr":
            guard let value = try double(0, in: 0...8), value > 0 else { throw .badRequest("imgproxy option dpr needs a number in 0...8 above 0") }
            dpr = value
        case "bg", "background":
            background = try Self.background(arguments)
        case "rot", "rotate":
            let degrees = try int(0, in: -3600...3600) ?? 0
            guard degrees % 90 == 0 else { throw .badRequest("imgproxy option \(name): \(degrees) is not a multiple of 90") }
            rotation = ((degrees % 360) + 360) % 360
        case "pd", "padding":
            // CSS order and shorthand: top [right [bottom [left]]], missing sides from the others.
            let top = try int(0, in: 0...4096) ?? 0
            let right = try int(1, in: 0...4096) ?? top
            let bottom = try int(2, in: 0...4096) ?? top
            let left = try int(3, in: 0...4096) ?? right
            padding = (top, right, bottom, left)
        case "mb", "max_bytes":
            maxBytes = try int(0, in: 0...1_000_000_000).flatMap { $0 == 0 ? nil : $0 }
        case "g", "gravity":
            guard let value = arguments.first else { throw .badRequest("imgproxy option \(name) needs a gravity") }
            smart = false
            focusPoint = nil
            gravityOffset = (0, 0)
            switch value {
            case "sm": smart = true
            case "fp":
                // g:fp:X:Y, the point in fractions of the source.
                guard let x = try double(1, in: 0...1), let y = try double(2, in: 0...1) else {
                    throw .badRequest("imgproxy option \(name):fp needs x and y between 0 and 1")
                }
                focusPoint = (x, y)
            default:
                // g:TYPE[:X_OFFSET:Y_OFFSET], offsets in pixels, or fractions of the side below 1.
                gravity = try Self.gravity(value)
                gravityOffset = try offsets(1)
            }
        case "c", "crop":
            // c:W:H[:gravity[:X:Y]]: sides in pixels, or fractions of the source's below 1.
            var step = CropStep()
            step.width = try double(0, in: 0...Double(side.upperBound)) ?? 0
            step.height = try double(1, in: 0...Double(side.upperBound)) ?? 0
            let placed = arguments.count > 2 && !arguments[2].isEmpty
            if placed {
                switch arguments[2] {
                case "sm": step.smart = true
                case "fp":
                    guard let x = try double(3, in: 0...1), let y = try double(4, in: 0...1) else {
                        throw .badRequest("imgproxy option \(name):…:fp needs x and y between 0 and 1")
                    }
                    (step.focusX, step.focusY) = (x, y)
                default:
                    step.gravity = try Self.gravity(arguments[2])
                    (step.offsetX, step.offsetY) = try offsets(3)
                }
            }
            crop = (step, placed)
        case "q", "quality":
            quality = try int(0, in: 0...100).map { $0 == 0 ? nil : $0 } ?? nil
        case "f", "format", "ext":
            if arguments.first?.lowercased() == "best" {
                (format, bestFormat) = (nil, true)
                return
            }
            guard let value = arguments.first?.lowercased(), ["jpg", "jpeg", "png", "webp", "avif", "gif", "jxl"].contains(value),
                let format = ImageFormat(name: value)
            else {
                throw .badRequest("imgproxy format \"\(arguments.first ?? "")\" is not one of jpg, png, webp, avif, gif, jxl, best")
            }
            self.format = format
            bestFormat = false
        case "bl", "blur": blur = try double(0, in: 0...100)
        case "sh", "sharpen": sharpen = try double(0, in: 0...100)
        case "ar", "auto_rotate", "sm", "strip_metadata", "scp", "strip_color_profile", "cb", "cachebuster", "kcr", "keep_copyright",
            "eth", "enforce_thumbnail", "ph", "preserve_hdr":
            // Images are always auto-rotated and re-encoded without metadata from their full
            // pixels (never from an embedded thumbnail), in 8-bit sRGB (no HDR to preserve);
            // cache busters only change the URL.
            break
        case "t", "trim":
            // t:THRESHOLD[:RRGGBB[:EQUAL_HOR[:EQUAL_VER]]]; no threshold turns it off.
            guard let threshold = try double(0, in: 0...442) else {
                trim = nil
                break
            }
            var background = ImageProcessors.Trim.Background.topLeft
            if arguments.count > 1, !arguments[1].isEmpty {
                guard arguments[1].count == 6, let color = RGBAColor(hex: arguments[1]) else {
                    throw .badRequest("imgproxy option \(name): colour \"\(arguments[1])\" is not hex RRGGBB")
                }
                background = .color(color)
            }
            trim = ImageProcessors.Trim(
                threshold: threshold, background: background, equalHorizontal: try bool(2) ?? false, equalVertical: try bool(3) ?? false)
        case "exp", "expires":
            guard let value = arguments.first, let seconds = TimeInterval(value) else {
                throw .badRequest("imgproxy option \(name) needs a Unix time")
            }
            expires = seconds
        default:
            throw .badRequest("unknown or unsupported imgproxy option \"\(name)\"")
        }
    }

    /// Checks what only all options together say: the box times `dpr` stays within ``sides``.
    func validate() throws(ServerError) {
        guard Double(max(width, height)) * dpr <= Double(Self.sides.upperBound) else {
            throw .badRequest(
                "imgproxy size \(width)x\(height) at dpr \(identifierNumber(dpr)) is over \(Self.sides.upperBound) pixels a side")
        }
    }

    /// `bg:R:G:B` or `bg:RRGGBB`; no argument turns the background off.
    static func background(_ arguments: [String]) throws(ServerError) -> RGBAColor? {
        let given = arguments.filter { !$0.isEmpty }
        switch given.count {
        case 0: return nil
        case 1:
            // RRGGBB only: imgproxy's background has no alpha.
            guard given[0].count == (given[0].hasPrefix("#") ? 7 : 6), let color = RGBAColor(hex: given[0]) else {
                throw .badRequest("imgproxy background \"\(given[0])\" is not a hex colour RRGGBB")
            }
            return color
        case 3:
            let channels = given.compactMap { UInt8($0) }
            guard channels.count == 3 else { throw .badRequest("imgproxy background \(given.joined(separator: ":")) is not R:G:B in 0...255") }
            return RGBAColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw .badRequest("imgproxy background needs R:G:B or a hex colour")
        }
    }

    static func gravity(_ value: String) throws(ServerError) -> ImageProcessors.Gravity {
        switch value {
        case "ce": .center
        case "no": .top
        case "so": .bottom
        case "ea": .right
        case "we": .left
        case "noea": .topRight
        case "nowe": .topLeft
        case "soea": .bottomRight
        case "sowe": .bottomLeft
        default: throw .badRequest("imgproxy gravity \"\(value)\" is not one of ce, no, so, ea, we, noea, nowe, soea, sowe, sm, fp")
        }
    }

    /// The processors in imgproxy's order: trim, crop, resize (with its extend), rotation, blur,
    /// sharpen, padding (times `dpr`), then the flatten onto ``background``. A rotation of a
    /// resize that looks the same turned (centred, no crop) runs after it on the turned box, so
    /// the resize still plans the decode; any other rotation runs first.
    var processors: [any ImageProcessing] {
        var result: [any ImageProcessing] = trim.map { [$0] } ?? []
        var step = ResizeStep()
        step.width = width
        step.height = height
        step.upscale = enlarge
        step.gravity = gravity
        step.smart = smart
        step.focus = focusPoint.map { .point(x: $0.x, y: $0.y) }
        (step.offsetX, step.offsetY) = gravityOffset
        step.dpr = dpr
        step.extend = extend
        step.extendGravity = extendGravity
        (step.extendOffsetX, step.extendOffsetY) = extendOffset
        step.extendAspectRatio = extendAspectRatio
        step.extendAspectRatioGravity = extendAspectRatioGravity
        (step.extendAspectRatioOffsetX, step.extendAspectRatioOffsetY) = extendAspectRatioOffset
        (step.zoomX, step.zoomY) = zoom
        (step.minWidth, step.minHeight) = (minWidth, minHeight)
        step.mode = resizingType
        let symmetric =
            crop == nil && gravity == .center && !smart && focusPoint == nil && gravityOffset == (0, 0) && extendGravity == .center
            && extendOffset == (0, 0) && extendAspectRatioGravity == .center && extendAspectRatioOffset == (0, 0)
        // Rotation, then the flips (imgproxy's order), before the result crop.
        var rotate: [any ImageProcessing] = rotation == 0 ? [] : [ImageProcessors.Rotate(degrees: rotation)]
        if flip.horizontal || flip.vertical { rotate.append(ImageProcessors.Flip(horizontal: flip.horizontal, vertical: flip.vertical)) }
        if symmetric && (rotation == 90 || rotation == 270) {
            // Resized before it is turned: every per-axis option turns with the box.
            swap(&step.width, &step.height)
            swap(&step.zoomX, &step.zoomY)
            swap(&step.minWidth, &step.minHeight)
        }
        if !symmetric { result += rotate }
        if let crop {
            var step = crop.step
            if !crop.placed {
                // The crop takes the gravity of `g`, a smart one too.
                step.gravity = gravity
                step.smart = smart
                (step.offsetX, step.offsetY) = gravityOffset
                (step.focusX, step.focusY) = (focusPoint?.x, focusPoint?.y)
            }
            result.append(step.fixed)
        }
        // A resize first whenever there is no crop, so the pipeline can plan the decode from it.
        result += step.processors
        if symmetric { result += rotate }
        if let blur, blur > 0 { result.append(ImageProcessors.Blur(sigma: blur)) }
        if let sharpen, sharpen > 0 { result.append(ImageProcessors.Sharpen(sigma: sharpen)) }
        if pixelate > 1 { result.append(ImageProcessors.Pixelate(size: pixelate)) }
        let (top, right, bottom, left) = padding
        if top > 0 || right > 0 || bottom > 0 || left > 0 {
            func scaled(_ side: Int) -> Int { Int((Double(side) * dpr).rounded()) }
            result.append(PaddingStep(top: scaled(top), right: scaled(right), bottom: scaled(bottom), left: scaled(left)))
        }
        if let background { result.append(ImageProcessors.Pad(background: background)) }
        return result
    }
}
