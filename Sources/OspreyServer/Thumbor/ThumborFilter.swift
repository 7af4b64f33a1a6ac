import Foundation
import Osprey

/// One thumbor filter from a `filters:name(args):name(args)` segment, and what it does to an
/// ``ImageJob``. Unknown filters and out-of-range arguments are 400s naming the filter.
struct ThumborFilter: Sendable, Equatable {
    /// The filter's name, e.g. `quality`.
    var name: String
    /// Its arguments, split at top-level commas, trimmed.
    var arguments: [String]

    /// Settings that filters change outside the processor chain.
    struct Adjustments {
        /// `false` after `no_upscale()`.
        var upscale = true
        /// `true` after `upscale()` (fit-in modes enlarge only then).
        var explicitUpscale = false
        /// The fit-in box, for `fill` (`nil` without fit-in).
        var box: (width: Int, height: Int)?
        /// The `focal` region, in source pixels.
        var focal: (left: Int, top: Int, right: Int, bottom: Int)?
        /// `true` after `stretch()`: a sized resize without fit-in ignores the aspect ratio.
        var stretch = false
    }

    /// Parses `name(args):name(args)…`; arguments may themselves hold `:` and `(…)` (URLs).
    static func parseList(_ text: String) throws(ServerError) -> [ThumborFilter] {
        var filters: [ThumborFilter] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard let open = text[index...].firstIndex(of: "(") else {
                throw .badRequest("thumbor filter \"\(text[index...])\" has no argument list")
            }
            let name = String(text[index..<open])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" || $0.isNumber }) else {
                throw .badRequest("thumbor filter name \"\(name)\" is malformed")
            }
            var depth = 0
            var close: String.Index?
            var cursor = open
            while cursor < text.endIndex {
                if text[cursor] == "(" { depth += 1 }
                if text[cursor] == ")" {
                    depth -= 1
                    if depth == 0 {
                        close = cursor
                        break
                    }
                }
                cursor = text.index(after: cursor)
            }
            guard let close else { throw .badRequest("thumbor filter \(name) has an unclosed argument list") }
            let inside = text[text.index(after: open)..<close]
            let arguments =
                inside.isEmpty
                ? []
                : inside.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
            filters.append(ThumborFilter(name: name, arguments: arguments))
            index = text.index(after: close)
            if index < text.endIndex {
                guard text[index] == ":" else { throw .badRequest("thumbor filters must be separated by \":\" after \(name)(…)") }
                index = text.index(after: index)
            }
        }
        return filters
    }

    /// Applies the filter to `job` (quality, format, limits) or appends its processor.
    func apply(to job: inout ImageJob, adjustments: inout Adjustments, processors: inout [any ImageProcessing]) throws(ServerError) {
        switch name {
        case "quality":
            let quality = try int(0, in: 0...100)
            job.quality = max(1, quality)
        case "format":
            let value = try string(0).lowercased()
            guard ["jpeg", "jpg", "png", "webp", "avif", "gif", "jxl"].contains(value), let format = ImageFormat(name: value) else {
                throw invalid("format \"\(value)\" is not one of jpeg, png, webp, avif, gif, jxl")
            }
            job.format = format
        case "blur":
            let radius = try double(0, in: 0...150)
            let sigma = arguments.count > 1 ? try double(1, in: 0...150) : radius
            if sigma > 0 { processors.append(ImageProcessors.Blur(sigma: sigma)) }
        case "sharpen":
            // sharpen(amount, radius, luminance_only): libvips' sharpen takes the radius as sigma.
            _ = try double(0, in: 0...10)
            let radius = arguments.count > 1 ? try double(1, in: 0.01...10) : 1
            processors.append(ImageProcessors.Sharpen(sigma: radius))
        case "brightness":
            processors.append(ThumborColorTables.brightness(try int(0, in: -100...100)))
        case "contrast":
            processors.append(ThumborColorTables.contrast(try int(0, in: -100...100)))
        case "saturation":
            // thumbor's C filter takes the argument as the factor (1 unchanged, 0 grey), although
            // its documentation speaks of a percentage: clients' URLs were tuned on the former.
            processors.append(ImageProcessors.Saturation(factor: try double(0, in: -100...100)))
        case "grayscale":
            processors.append(ImageProcessors.Grayscale())
        case "rotate":
            let degrees = try int(0, in: -3600...3600)
            // thumbor turns by multiples of 90 only and leaves the image as it is for other angles.
            guard degrees % 90 == 0 else { break }
            // Counter-clockwise, as thumbor's engine turns (Rotate turns clockwise).
            let normalised = ((-degrees % 360) + 360) % 360
            if normalised != 0 { processors.append(ImageProcessors.Rotate(degrees: normalised)) }
        case "round_corner":
            // round_corner(a|b, r, g, b[, transparent])
            let radiusText = try string(0).split(separator: "|").first.map(String.init) ?? ""
            guard let radius = Int(radiusText), (1...10_000).contains(radius) else { throw invalid("radius \"\(radiusText)\" is not 1...10000") }
            let transparent = arguments.count > 4 && ["1", "true", "True"].contains(arguments[4])
            var background: RGBAColor?
            if !transparent && arguments.count >= 4 {
                background = RGBAColor(
                    red: UInt8(try int(1, in: 0...255)), green: UInt8(try int(2, in: 0...255)), blue: UInt8(try int(3, in: 0...255)))
            }
            processors.append(ImageProcessors.RoundCorner(radius: radius, background: background))
        case "rgb":
            let (red, green, blue) = (try int(0, in: -100...100), try int(1, in: -100...100), try int(2, in: -100...100))
            processors.append(ThumborColorTables.rgb(red: red, green: green, blue: blue))
        case "colorize":
            let (red, green, blue) = (try int(0, in: 0...100), try int(1, in: 0...100), try int(2, in: 0...100))
            let fillText = try string(3)
            guard fillText.count == 6, let fill = RGBAColor(hex: fillText) else { throw invalid("fill \"\(fillText)\" is not a hex colour RRGGBB") }
            processors.append(ThumborColorTables.colorize(red: red, green: green, blue: blue, fill: fill))
        case "curve":
            guard let curves = ThumborColorTables.curves(arguments.joined(separator: ",")) else {
                throw invalid("needs four curves [(x,y),…] with x increasing and values in 0...255")
            }
            processors.append(ThumborColorTables.curve(all: curves[0], red: curves[1], green: curves[2], blue: curves[3]))
        case "equalize":
            processors.append(ImageProcessors.Equalize())
        case "convolution":
            // convolution(k;k;…, columns[, normalize]), normalize default true.
            var kernel: [Double] = []
            for entry in try string(0).split(separator: ";", omittingEmptySubsequences: false) {
                guard let value = Double(entry), value.isFinite else { throw invalid("kernel entry \"\(entry)\" is not a number") }
                kernel.append(value)
            }
            let columns = try int(1, in: 1...15)
            let normalize = arguments.count > 2 ? try boolean(2) : true
            if let problem = ImageProcessors.Convolve.problem(kernel: kernel, columns: columns) { throw invalid(problem) }
            processors.append(ImageProcessors.Convolve(kernel: kernel, columns: columns, normalize: normalize))
        case "noise":
            let amount = try int(0, in: 0...100)
            let seed = arguments.count > 1 ? try int(1, in: 0...Int(UInt32.max)) : 0
            processors.append(ImageProcessors.Noise(amount: amount, seed: UInt32(seed)))
        case "autojpg":
            // Osprey answers an image without alpha as JPEG already (thumbor's AUTO_PNG_TO_JPG);
            // autojpg(false) keeps a PNG source's format.
            job.keepsPNG = !(arguments.isEmpty ? true : try boolean(0))
        case "red_eye":
            // thumbor corrects red eyes only inside the faces its OpenCV face detection found;
            // Osprey has no face detection, so, as thumbor without it, there is nothing to correct.
            break
        case "extract_focal":
            // Read from the image URL by ThumborURLParser before the source is fetched.
            break
        case "no_upscale":
            adjustments.upscale = false
        case "strip_exif", "strip_icc":
            // Results are always re-encoded from sRGB pixels without EXIF or ICC metadata.
            break
        case "max_bytes":
            job.maxBytes = try int(0, in: 1...1_000_000_000)
        case "max_age":
            job.maxAge = try int(0, in: 0...315_360_000)
        case "stretch":
            adjustments.stretch = true
        case "proportion":
            // thumbor ignores a proportion outside (0, 1].
            let value = try double(0, in: -1_000_000...1_000_000)
            if value > 0 && value < 1 { processors.append(ProportionStep(factor: value)) }
        case "background_color":
            processors.append(ImageProcessors.Pad(background: try Self.color(try string(0))))
        case "upscale":
            adjustments.explicitUpscale = true
        case "fill":
            let width = adjustments.box?.width ?? 0, height = adjustments.box?.height ?? 0
            switch try string(0).lowercased() {
            case "blur": processors.append(ImageProcessors.Backdrop(width: width, height: height, style: .blurred(sigma: 50)))
            case "auto": processors.append(ImageProcessors.Backdrop(width: width, height: height, style: .medianColor))
            case let text: processors.append(ImageProcessors.Pad(width: width, height: height, background: try Self.color(text)))
            }
        case "focal":
            // focal(AxB:CxD) in source pixels (several rectangles joined by commas, or a point AxB):
            // fill crops centre on their union.
            // With the region extract_focal() found, if any.
            var union = adjustments.focal
            for argument in arguments {
                let rect: (left: Int, top: Int, right: Int, bottom: Int)
                if let r = ThumborURLParser.parseCrop(argument) {
                    rect = r
                } else if let point = ThumborURLParser.parseCrop(argument + ":" + argument) {
                    rect = point
                } else {
                    throw invalid("\"\(argument)\" is not a rectangle AxB:CxD or a point AxB")
                }
                guard rect.right >= rect.left, rect.bottom >= rect.top, rect.right <= 100_000, rect.bottom <= 100_000 else {
                    throw invalid("rectangle \"\(argument)\" is empty or out of range")
                }
                union = union.map { (min($0.left, rect.left), min($0.top, rect.top), max($0.right, rect.right), max($0.bottom, rect.bottom)) } ?? rect
            }
            guard !arguments.isEmpty, let union else { throw invalid("needs a rectangle AxB:CxD") }
            adjustments.focal = union
        case "frame":
            // frame(url): a nine-patch fetched under the source rules, drawn around the image. The
            // URL may hold commas, which split it into several arguments.
            let url = try ThumborURLParser.sourceURL(arguments.joined(separator: ","))
            job.watermarks.append(
                WatermarkRequest(url: url, index: processors.count, x: .center, y: .center, transparency: 0, isFrame: true))
        case "watermark":
            // watermark(url, x, y, transparency[, w_ratio, h_ratio])
            guard arguments.count >= 4 else { throw invalid("needs url, x, y and transparency") }
            let url = try ThumborURLParser.sourceURL(arguments[0])
            let ratios = try (4..<6).map { (index) throws(ServerError) -> Double? in
                guard index < arguments.count, arguments[index] != "none", !arguments[index].isEmpty else { return nil }
                return try double(index, in: 0.1...100)
            }
            job.watermarks.append(
                WatermarkRequest(
                    url: url, index: processors.count, x: try position(1), y: try position(2),
                    transparency: try int(3, in: 0...100), widthRatio: ratios[0], heightRatio: ratios[1]))
        default:
            throw .badRequest("unknown or unsupported thumbor filter \"\(name)\"")
        }
    }

    /// A watermark position: pixels (negative from the far edge), `NNp` percent, or `center`.
    private func position(_ index: Int) throws(ServerError) -> ImageProcessors.Watermark.Position {
        let text = try string(index)
        if text == "center" { return .center }
        if text == "repeat" { return .repeat }
        if text.hasSuffix("p"), let percent = Double(text.dropLast()), abs(percent) <= 100 { return .percent(percent) }
        guard let pixels = Int(text), abs(pixels) <= 100_000 else { throw invalid("position \"\(text)\" is not pixels, NNp or center") }
        return .pixels(pixels)
    }

    /// A `fill` colour: a name, `RRGGBB`/`RGB` hex, or `transparent`.
    static func color(_ text: String) throws(ServerError) -> RGBAColor {
        switch text.lowercased() {
        case "transparent": return .clear
        case "white": return .white
        case "black": return .black
        case "red": return RGBAColor(red: 255, green: 0, blue: 0)
        case "green": return RGBAColor(red: 0, green: 128, blue: 0)
        case "blue": return RGBAColor(red: 0, green: 0, blue: 255)
        default:
            var hex = text
            if hex.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
            guard let color = RGBAColor(hex: hex) else { throw .badRequest("thumbor filter fill: \"\(text)\" is not a colour") }
            return color
        }
    }

    private func invalid(_ message: String) -> ServerError {
        .badRequest("thumbor filter \(name): \(message)")
    }

    private func string(_ index: Int) throws(ServerError) -> String {
        guard index < arguments.count, !arguments[index].isEmpty else { throw invalid("argument \(index + 1) is missing") }
        return arguments[index]
    }

    private func double(_ index: Int, in range: ClosedRange<Double>) throws(ServerError) -> Double {
        let text = try string(index)
        guard let value = Double(text), value.isFinite else { throw invalid("argument \"\(text)\" is not a number") }
        guard range.contains(value) else {
            throw invalid("argument \(text) is outside \(identifierNumber(range.lowerBound))...\(identifierNumber(range.upperBound))")
        }
        return value
    }

    /// thumbor's boolean: `true`, `True`, `1`, `false`, `False` or `0`.
    private func boolean(_ index: Int) throws(ServerError) -> Bool {
        switch try string(index) {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        case let text: throw invalid("argument \"\(text)\" is not true, false, 1 or 0")
        }
    }

    private func int(_ index: Int, in range: ClosedRange<Int>) throws(ServerError) -> Int {
        let text = try string(index)
        guard let value = Int(text) else { throw invalid("argument \"\(text)\" is not an integer") }
        guard range.contains(value) else { throw invalid("argument \(text) is outside \(range.lowerBound)...\(range.upperBound)") }
        return value
    }
}

/// `2` rather than `2.0`.
func identifierNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}
