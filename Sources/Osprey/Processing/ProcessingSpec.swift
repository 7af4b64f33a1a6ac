import Foundation

/// A textual processor spec, the one grammar shared by the CLI and (later) the proxy server's URLs.
///
/// Steps are separated by commas and run in order; each step is `name:arg:arg`:
///
/// | step | meaning |
/// |---|---|
/// | `resize:WxH[:fit\|fill\|stretch]` | `ImageProcessors.Resize` (mode default `fit`) |
/// | `downsample:WxH`, `thumbnail:N` | `ImageProcessors.Downsample` (never upscales) |
/// | `crop:WxH[:gravity]`, `crop:WxH:X:Y` | `ImageProcessors.Crop` (gravity default `center`; also `top`, `bottom`, `left`, `right`, `topleft`, `topright`, `bottomleft`, `bottomright`) |
/// | `smartcrop:WxH` | `ImageProcessors.SmartCrop` (placed by libvips' attention measure, no resize) |
/// | `smartresize:WxH` | `ImageProcessors.SmartResize` (cover the box, then a smart crop to it) |
/// | `trim[:T[:REF[:h\|v\|hv]]]` | `ImageProcessors.Trim` (threshold default 10; the border colour `topleft` (default), `bottomright` or `RRGGBB`; sides equalised) |
/// | `round:R[:corners][:color]` | `ImageProcessors.RoundCorner` (corners `all` or e.g. `tl+br`) |
/// | `border:W[:color]` | `ImageProcessors.Border` (colour default `000000`) |
/// | `blur:S` | `ImageProcessors.Blur` |
/// | `sharpen[:S]` | `ImageProcessors.Sharpen` (sigma default 1) |
/// | `tint:color` | `ImageProcessors.Tint` |
/// | `overlay:color[:F]` | `ImageProcessors.Overlay` (fraction default 0.5) |
/// | `grayscale` | `ImageProcessors.Grayscale` |
/// | `bw[:T]` | `ImageProcessors.BlackWhite` (threshold default 128) |
/// | `color:B[:C[:S]]` | `ImageProcessors.ColorControls` (defaults 0, 1, 1) |
/// | `equalize` | `ImageProcessors.Equalize` |
/// | `convolve:K;K;…:COLUMNS[:raw]` | `ImageProcessors.Convolve` (normalised unless `raw`) |
/// | `saturation:F` | `ImageProcessors.Saturation` (HSP model; 1 unchanged, 0 grey) |
/// | `pixelate:N` | `ImageProcessors.Pixelate` (blocks of N pixels) |
/// | `noise:A[:SEED]` | `ImageProcessors.Noise` (amount 0...100, seed default 0) |
/// | `flip[:h\|v\|hv]` | `ImageProcessors.Flip` (default `h`) |
/// | `rotate:D` | `ImageProcessors.Rotate` (90, 180, 270) |
/// | `format:F[:Q]` | output format and quality (not a processor; not `svg` or `pdf`, which are read only) |
/// | `quality:Q` | output quality 1...100 (not a processor) |
///
/// Colours are `RRGGBB` or `RRGGBBAA` hex. Example: `resize:200x200:fill,blur:2,round:12,format:webp:80`.
/// The processor's ``ImageProcessing/identifier`` is the canonical form of its steps, so it parses back.
public struct ProcessingSpec: Sendable, CustomStringConvertible {
    /// The processors, in order (empty when the spec only sets the format).
    public var processor: ImageProcessors.Composition
    /// The output format, if the spec names one.
    public var format: ImageFormat?
    /// The output quality, if the spec names one.
    public var quality: Int?

    /// An empty spec: no processing, no format, no quality.
    public init() {
        self.processor = ImageProcessors.Composition([])
    }

    /// Parses `spec`; throws ``OspreyError/ProcessingReason/invalidSpec(spec:reason:)`` naming the bad step.
    public init(parsing spec: String) throws(OspreyError) {
        self.init()
        var processors: [any ImageProcessing] = []
        for rawStep in spec.split(separator: ",", omittingEmptySubsequences: false) {
            let step = rawStep.trimmingCharacters(in: .whitespaces)
            guard !step.isEmpty else {
                if spec.trimmingCharacters(in: .whitespaces).isEmpty { break }
                throw .processing(.invalidSpec(spec: spec, reason: "empty step"))
            }
            let parts = step.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            do throws(StepError) {
                switch try Self.parse(name: parts[0].lowercased(), args: Array(parts.dropFirst())) {
                case .processor(let processor): processors.append(processor)
                case .format(let format, let quality):
                    self.format = format
                    if let quality { self.quality = quality }
                case .quality(let quality): self.quality = quality
                }
            } catch {
                throw .processing(.invalidSpec(spec: spec, reason: "step \"\(step)\": \(error.message)"))
            }
        }
        self.processor = ImageProcessors.Composition(processors)
    }

    /// The canonical spec: the processor identifier, then `format:F[:Q]` or `quality:Q`.
    public var description: String {
        var steps = processor.identifier.isEmpty ? [] : [processor.identifier]
        if let format {
            steps.append("format:\(format.rawValue)" + (quality.map { ":\($0)" } ?? ""))
        } else if let quality {
            steps.append("quality:\(quality)")
        }
        return steps.joined(separator: ",")
    }

    // MARK: - Steps

    private enum Step {
        case processor(any ImageProcessing)
        case format(ImageFormat, Int?)
        case quality(Int)
    }

    private struct StepError: Error {
        let message: String
    }

    private static func parse(name: String, args: [String]) throws(StepError) -> Step {
        func arity(_ range: ClosedRange<Int>) throws(StepError) {
            guard range.contains(args.count) else {
                let expected = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
                throw StepError(message: "expected \(expected) argument(s), got \(args.count)")
            }
        }
        switch name {
        case "resize":
            try arity(1...2)
            let (w, h) = try size(args[0])
            let mode = args.count > 1 ? args[1].lowercased() : "fit"
            guard let contentMode = ImageProcessors.ContentMode(rawValue: mode == "none" ? "stretch" : mode) else {
                throw StepError(message: "unknown content mode \"\(args[1])\" (fit, fill, stretch)")
            }
            return .processor(ImageProcessors.Resize(width: w, height: h, contentMode: contentMode))
        case "downsample":
            try arity(1...1)
            let (w, h) = try size(args[0])
            return .processor(ImageProcessors.Downsample(width: w, height: h))
        case "thumbnail":
            try arity(1...1)
            let n = try positiveInt(args[0], "size")
            return .processor(ImageProcessors.Downsample(maxPixelSize: n))
        case "crop":
            try arity(1...3)
            let (w, h) = try size(args[0])
            if args.count == 3 {
                let x = try int(args[1], "x"), y = try int(args[2], "y")
                return .processor(ImageProcessors.Crop(.rect(x: x, y: y, width: w, height: h)))
            }
            let gravityName = args.count > 1 ? args[1].lowercased() : "center"
            guard let gravity = ImageProcessors.Gravity(rawValue: gravityName == "centre" ? "center" : gravityName) else {
                throw StepError(message: "unknown gravity \"\(args[1])\"")
            }
            return .processor(ImageProcessors.Crop(width: w, height: h, gravity: gravity))
        case "smartcrop", "smartresize":
            try arity(1...1)
            let (w, h) = try size(args[0])
            return .processor(name == "smartcrop" ? ImageProcessors.SmartCrop(width: w, height: h) : ImageProcessors.SmartResize(width: w, height: h))
        case "trim":
            try arity(0...3)
            let threshold = args.isEmpty ? 10 : try double(args[0], "threshold")
            guard threshold >= 0 else { throw StepError(message: "threshold \(args[0]) must be ≥ 0") }
            var background = ImageProcessors.Trim.Background.topLeft
            switch args.count > 1 ? args[1].lowercased() : "topleft" {
            case "topleft": break
            case "bottomright": background = .bottomRight
            default: background = .color(try color(args[1]))
            }
            let equal = args.count > 2 ? args[2].lowercased() : ""
            guard ["", "h", "v", "hv", "vh"].contains(equal) else { throw StepError(message: "unknown sides \"\(args[2])\" (h, v, hv)") }
            let trim = ImageProcessors.Trim(
                threshold: threshold, background: background, equalHorizontal: equal.contains("h"), equalVertical: equal.contains("v"))
            return .processor(trim)
        case "round":
            try arity(1...3)
            let radius = try positiveInt(args[0], "radius")
            var corners = ImageProcessors.RectCorner.all
            if args.count > 1 {
                guard let parsed = ImageProcessors.RectCorner(token: args[1].lowercased()) else {
                    throw StepError(message: "unknown corners \"\(args[1])\" (all, or tl+tr+bl+br)")
                }
                corners = parsed
            }
            let background = args.count > 2 ? try color(args[2]) : nil
            return .processor(ImageProcessors.RoundCorner(radius: radius, corners: corners, background: background))
        case "border":
            try arity(1...2)
            return .processor(ImageProcessors.Border(width: try positiveInt(args[0], "width"), color: args.count > 1 ? try color(args[1]) : .black))
        case "blur":
            try arity(1...1)
            return .processor(ImageProcessors.Blur(sigma: try positiveDouble(args[0], "sigma")))
        case "sharpen":
            try arity(0...1)
            return .processor(ImageProcessors.Sharpen(sigma: args.isEmpty ? 1 : try positiveDouble(args[0], "sigma")))
        case "tint":
            try arity(1...1)
            return .processor(ImageProcessors.Tint(color: try color(args[0])))
        case "overlay":
            try arity(1...2)
            let fraction = args.count > 1 ? try double(args[1], "fraction") : 0.5
            guard (0...1).contains(fraction) else { throw StepError(message: "fraction \(args[1]) must be within 0...1") }
            return .processor(ImageProcessors.Overlay(color: try color(args[0]), fraction: fraction))
        case "grayscale", "greyscale":
            try arity(0...0)
            return .processor(ImageProcessors.Grayscale())
        case "bw", "blackwhite":
            try arity(0...1)
            let threshold = args.isEmpty ? 128 : try int(args[0], "threshold")
            guard (0...255).contains(threshold) else { throw StepError(message: "threshold \(threshold) must be within 0...255") }
            return .processor(ImageProcessors.BlackWhite(threshold: threshold))
        case "color":
            try arity(1...3)
            let brightness = try double(args[0], "brightness")
            let contrast = args.count > 1 ? try double(args[1], "contrast") : 1
            let saturation = args.count > 2 ? try double(args[2], "saturation") : 1
            guard (-1...1).contains(brightness), contrast >= 0, saturation >= 0 else {
                throw StepError(message: "brightness must be within -1...1, contrast and saturation ≥ 0")
            }
            return .processor(ImageProcessors.ColorControls(brightness: brightness, contrast: contrast, saturation: saturation))
        case "equalize", "equalise":
            try arity(0...0)
            return .processor(ImageProcessors.Equalize())
        case "convolve":
            try arity(2...3)
            var kernel: [Double] = []
            for entry in args[0].split(separator: ";", omittingEmptySubsequences: false) { kernel.append(try double(String(entry), "kernel entry")) }
            guard args.count < 3 || args[2].lowercased() == "raw" else { throw StepError(message: "unknown option \"\(args[2])\" (raw)") }
            let columns = try positiveInt(args[1], "columns")
            if let problem = ImageProcessors.Convolve.problem(kernel: kernel, columns: columns) { throw StepError(message: problem) }
            return .processor(ImageProcessors.Convolve(kernel: kernel, columns: columns, normalize: args.count < 3))
        case "saturation":
            try arity(1...1)
            return .processor(ImageProcessors.Saturation(factor: try double(args[0], "factor")))
        case "pixelate":
            try arity(1...1)
            return .processor(ImageProcessors.Pixelate(size: try positiveInt(args[0], "size")))
        case "noise":
            try arity(1...2)
            let amount = try int(args[0], "amount")
            guard (0...100).contains(amount) else { throw StepError(message: "amount \(amount) must be within 0...100") }
            let seed = args.count > 1 ? try int(args[1], "seed") : 0
            guard let seed = UInt32(exactly: seed) else { throw StepError(message: "seed \(seed) must be within 0...\(UInt32.max)") }
            return .processor(ImageProcessors.Noise(amount: amount, seed: seed))
        case "flip":
            try arity(0...1)
            let direction = args.first?.lowercased() ?? "h"
            guard ["h", "v", "hv", "vh"].contains(direction) else { throw StepError(message: "unknown direction \"\(direction)\" (h, v, hv)") }
            return .processor(ImageProcessors.Flip(horizontal: direction.contains("h"), vertical: direction.contains("v")))
        case "rotate":
            try arity(1...1)
            let degrees = try int(args[0], "degrees")
            guard degrees % 90 == 0 else { throw StepError(message: "\(degrees) is not a multiple of 90") }
            return .processor(ImageProcessors.Rotate(degrees: degrees))
        case "format":
            try arity(1...2)
            guard let format = ImageFormat(name: args[0]) else { throw StepError(message: "unknown format \"\(args[0])\"") }
            // SVG and PDF are drawn, never written.
            guard !format.isVector else { throw StepError(message: "\(format) is read only, never written") }
            return .format(format, args.count > 1 ? try quality(args[1]) : nil)
        case "quality":
            try arity(1...1)
            return .quality(try quality(args[0]))
        default:
            throw StepError(message: "unknown step \"\(name)\"")
        }
    }

    private static func int(_ text: String, _ what: String) throws(StepError) -> Int {
        guard let value = Int(text) else { throw StepError(message: "\(what) \"\(text)\" is not an integer") }
        return value
    }

    private static func positiveInt(_ text: String, _ what: String) throws(StepError) -> Int {
        let value = try int(text, what)
        guard value > 0, value <= 100_000 else { throw StepError(message: "\(what) \(value) must be within 1...100000") }
        return value
    }

    private static func double(_ text: String, _ what: String) throws(StepError) -> Double {
        guard let value = Double(text), value.isFinite else { throw StepError(message: "\(what) \"\(text)\" is not a number") }
        return value
    }

    private static func positiveDouble(_ text: String, _ what: String) throws(StepError) -> Double {
        let value = try double(text, what)
        guard value > 0, value <= 1000 else { throw StepError(message: "\(what) \(text) must be within (0, 1000]") }
        return value
    }

    private static func size(_ text: String) throws(StepError) -> (Int, Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw StepError(message: "size \"\(text)\" must be WIDTHxHEIGHT") }
        return (try positiveInt(String(parts[0]), "width"), try positiveInt(String(parts[1]), "height"))
    }

    private static func color(_ text: String) throws(StepError) -> RGBAColor {
        guard let color = RGBAColor(hex: text) else { throw StepError(message: "colour \"\(text)\" must be RRGGBB or RRGGBBAA hex") }
        return color
    }

    private static func quality(_ text: String) throws(StepError) -> Int {
        let value = try int(text, "quality")
        guard (1...100).contains(value) else { throw StepError(message: "quality \(value) must be within 1...100") }
        return value
    }
}
