import Foundation
import Osprey

/// Parses imgproxy URLs (the open-source subset) into an ``ImageJob``:
///
///     /SIGNATURE/OPTIONS/plain/SOURCE[@ext]
///     /SIGNATURE/OPTIONS/BASE64URL_SOURCE[.ext]      (the base64 may be split by `/`)
///
/// Options: `rs`/`resize`, `s`/`size`, `rt`/`resizing_type`, `w`/`width`, `h`/`height`,
/// `mw`/`min-width`, `mh`/`min-height`, `z`/`zoom`, `dpr`, `el`/`enlarge`, `ex`/`extend`,
/// `exar`/`extend_aspect_ratio`, `g`/`gravity` (incl. `sm`, `fp`, offsets), `c`/`crop`, `t`/`trim`,
/// `pd`/`padding`, `rot`/`rotate`, `fl`/`flip`, `bg`/`background`, `bl`/`blur`, `sh`/`sharpen`,
/// `pix`/`pixelate`, `q`/`quality`, `fq`/`format_quality`, `mb`/`max_bytes`, `f`/`format`/`ext`,
/// `fn`/`filename`, `att`/`return_attachment`, `skp`/`skip_processing`, `raw`, `ar`/`auto_rotate`, `sm`/`strip_metadata`,
/// `scp`, `kcr`, `eth`, `cb`/`cachebuster`, `exp`/`expires`, `pr`/`preset`. The `default` preset is
/// applied to every URL first; ``onlyPresets`` is imgproxy's presets-only mode; `/-/` separates
/// chained pipelines (each run on the result of the one before; output options from the last). Every answer carries
/// imgproxy's `Content-Disposition` (``ImageJob/disposition``). **Signed bytes**: see ``ImgproxySigner``; the path after the
/// server's imgproxy prefix and the signature segment, leading slash included.
public struct ImgproxyURLParser: Sendable {
    /// The signer; `nil` when no key is configured (then the signature segment is ignored).
    public var signer: ImgproxySigner?
    /// Whether unsigned URLs (`_` or `insecure` as signature) are served although keys are set.
    /// Default `false`.
    public var allowUnsigned: Bool
    /// Presets, name → options text (`rs:fill:300:300/q:80`). Default none.
    public var presets: [String: String]
    /// The image `wm` draws (imgproxy's `IMGPROXY_WATERMARK_URL`); `nil`: `wm` draws nothing, as
    /// in imgproxy without a watermark. Default `nil`.
    public var watermark: URL?
    /// imgproxy's presets-only mode (`IMGPROXY_ONLY_PRESETS`): the option segments of a URL are
    /// preset names (`pr:NAME` too); any other option is a 400 with the reason. Default `false`.
    public var onlyPresets = false
    /// The clock `exp` is checked against (tests set their own).
    var now: @Sendable () -> Date = { Date() }

    /// A parser verifying with `signer` (default none), with `presets` (default none) and the
    /// `watermark` `wm` draws (default none).
    public init(signer: ImgproxySigner? = nil, allowUnsigned: Bool = false, presets: [String: String] = [:], watermark: URL? = nil) {
        self.signer = signer
        self.allowUnsigned = allowUnsigned
        self.presets = presets
        self.watermark = watermark
    }

    /// Applies the options of `preset` (`rs:fill:300:300/q:80`) to `options`.
    private func apply(preset: String, to options: inout ImgproxyOptions) throws(ServerError) {
        for part in preset.split(separator: "/") { try options.apply(String(part)) }
    }

    /// Parses `path` (after the prefix, starting with `/`). The `default` preset, when configured,
    /// is applied before the URL's options (imgproxy's behaviour).
    public func parse(path: String) throws(ServerError) -> ImageJob {
        let trimmed = path.drop { $0 == "/" }
        guard let slash = trimmed.firstIndex(of: "/") else { throw .badRequest("imgproxy URL \"\(path)\" has no source after its signature") }
        let signature = trimmed[..<slash]
        let signed = String(trimmed[slash...])
        if let signer {
            if !(allowUnsigned && (signature == "_" || signature == "insecure")) {
                guard signer.isValid(signature, for: signed) else { throw .forbidden("imgproxy signature \"\(signature)\" does not match the path") }
            }
        }
        var segments = signed.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        // Chained pipelines (`/-/`): each group of options is a pipeline of its own, run on the
        // result of the one before; the output options come from the last.
        var pipelines: [ImgproxyOptions] = []
        var options = ImgproxyOptions()
        if let defaults = presets["default"] { try apply(preset: defaults, to: &options) }
        var index = 0
        while index < segments.count, segments[index] != "plain" {
            let segment = segments[index]
            if segment == "-" {
                try options.validate()
                pipelines.append(options)
                options = ImgproxyOptions()
            } else if segment.hasPrefix("pr:") || segment.hasPrefix("preset:") {
                for name in segment.split(separator: ":").dropFirst() {
                    guard let preset = presets[String(name)] else { throw .badRequest("imgproxy preset \"\(name)\" is not configured") }
                    try apply(preset: preset, to: &options)
                }
            } else if onlyPresets {
                // imgproxy's presets-only mode: option segments are preset names.
                if let preset = presets[segment] {
                    try apply(preset: preset, to: &options)
                } else if segment.contains(":") {
                    throw .badRequest("imgproxy option \"\(segment)\" refused: only presets are served (--imgproxy-only-presets)")
                } else {
                    break
                }
            } else if segment.contains(":") {
                try options.apply(segment)
            } else {
                break
            }
            index += 1
        }
        guard index < segments.count else { throw .badRequest("imgproxy URL \"\(path)\" has no source") }
        var source: String
        var extensionName: String?
        if segments[index] == "plain" {
            // The plain source keeps its slashes as received: take the text after "/plain/".
            guard let range = signed.range(of: "/plain/") else { throw .badRequest("imgproxy URL \"\(path)\" has an empty plain source") }
            source = String(signed[range.upperBound...])
            if let at = source.lastIndex(of: "@") {
                extensionName = String(source[source.index(after: at)...])
                source = String(source[..<at])
            }
            source = source.removingPercentEncoding ?? source
        } else {
            segments = Array(segments[index...])
            var encoded = segments.joined()
            if let dot = encoded.lastIndex(of: ".") {
                extensionName = String(encoded[encoded.index(after: dot)...])
                encoded = String(encoded[..<dot])
            }
            guard let data = Base64URL.decode(encoded), let text = String(data: data, encoding: .utf8) else {
                throw .badRequest("imgproxy source \"\(encoded)\" is not URL-safe base64")
            }
            source = text
        }
        if let extensionName, !extensionName.isEmpty { try options.apply("f:" + extensionName) }
        try options.validate()
        guard !source.isEmpty else { throw .badRequest("imgproxy URL \"\(path)\" has an empty source") }
        if let expires = options.expires, expires < now().timeIntervalSince1970 {
            throw .notFound("imgproxy URL expired at \(Int(expires)) (exp option)")
        }
        var job = ImageJob(source: try SourceURL.parse(source))
        job.expires = options.expires.map(Date.init(timeIntervalSince1970:))
        job.format = options.format
        job.bestFormat = options.bestFormat
        job.quality = options.quality
        job.processors = pipelines.flatMap(\.processors) + options.processors
        job.maxBytes = options.maxBytes
        job.formatQuality = options.formatQuality
        job.skipProcessing = options.skipProcessing
        if let (opacity, placement) = options.watermark, opacity > 0, let watermark {
            // Drawn last, after the flatten onto the background, as imgproxy draws it.
            var imgproxy = placement
            imgproxy.dpr = options.dpr
            job.watermarks.append(
                WatermarkRequest(
                    url: watermark, index: job.processors.count, x: .center, y: .center,
                    transparency: Int(((1 - opacity) * 100).rounded()), imgproxy: imgproxy))
        }
        if options.raw {
            // The source's own bytes in whatever format it has (one Osprey can read).
            job.skipProcessing = Set(ImageFormat.allCases)
            job.format = nil
        }
        // imgproxy's file name: `fn`, else the source's, without its extension ("image" when empty).
        let stem = options.filename ?? (job.source.lastPathComponent as NSString).deletingPathExtension
        job.disposition = ImageJob.Disposition(stem: stem.isEmpty || stem == "/" ? "image" : stem, attachment: options.attachment)
        return job
    }
}
