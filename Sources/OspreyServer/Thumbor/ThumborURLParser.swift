import Foundation
import Osprey

/// Parses thumbor (and imagor) URLs into an ``ImageJob``:
///
///     /(unsafe|SIGNATURE)/[debug/][meta/][trim/][AxB:CxD/][fit-in/|adaptive-fit-in/|full-fit-in/][-]Wx[-]H/
///         [left|center|right/][top|middle|bottom/][smart/][filters:name(args):…/]IMAGE
///
/// **Signed bytes**: the request path after the server's thumbor prefix and the `SIGNATURE/`
/// segment, exactly as received (percent-encoding kept, no leading slash), e.g.
/// `300x200/smart/http://example.com/a.jpg`. libthumbor signs the image URL unquoted, so when that
/// does not verify, the same path percent-decoded is tried, and when the request has a query
/// (libthumbor leaves a `?` in the image URL as is) the path with `?query` appended is tried too.
/// Signatures are compared in constant time.
public struct ThumborURLParser: Sendable {
    /// The signer; `nil` when no key is configured (then only `unsafe/` URLs are served).
    public var signer: ThumborSigner?
    /// Whether `unsafe/` URLs are served although a key is configured. Default `false`.
    public var allowUnsafe: Bool
    /// Whether image parts without a scheme are files under the local root (thumbor's file
    /// loader; `http(s)://` parts are still fetched, its `file_loader_http_fallback`). Default
    /// `false`: they are `http://` hosts, as thumbor's HTTP loader reads them.
    public var localFiles = false
    /// Whether an image part that is an upload id (32 lowercase hex digits, optionally followed by
    /// `/file-name`, the `Location` of `POST /image`) names that upload. Default `false`.
    public var uploads = false
    /// The bucket image parts without a scheme are keys in (thumbor-aws's loader,
    /// `TC_AWS_LOADER_BUCKET`; the part percent-decoded once is the key). Default `nil`.
    public var s3Bucket: String?

    /// A parser verifying with `signer` (default none), serving `unsafe/` when no signer is set or
    /// `allowUnsafe` (default `false`).
    public init(signer: ThumborSigner? = nil, allowUnsafe: Bool = false) {
        self.signer = signer
        self.allowUnsafe = allowUnsafe
    }

    /// Parses `path` (after the prefix, without its leading slash) with the request's `query`.
    public func parse(path: String, query: String? = nil) throws(ServerError) -> ImageJob {
        guard let slash = path.firstIndex(of: "/") else { throw .badRequest("thumbor URL \"/\(path)\" has no image after its first segment") }
        let first = path[..<slash]
        var rest = String(path[path.index(after: slash)...])
        try verify(first: first, rest: rest, query: query)
        var query = query
        var metadata: ImageJob.Metadata?
        // meta/ answers JSON; its `callback` argument (JSONP) is the server's, not the image URL's.
        if rest.hasPrefix("meta/") || rest.hasPrefix("debug/meta/") {
            var arguments = (query ?? "").split(separator: "&").map(String.init)
            let callback = arguments.first { $0.hasPrefix("callback=") }.map { String($0.dropFirst(9)) }
            arguments.removeAll { $0.hasPrefix("callback=") }
            query = arguments.joined(separator: "&")
            guard callback.map({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.$".contains($0)) } }) ?? true
            else { throw .badRequest("thumbor meta callback \"\(callback ?? "")\" is not a JavaScript name") }
            metadata = ImageJob.Metadata(callback: callback)
        }
        if let query, !query.isEmpty { rest += "?" + query }

        var segments = Cursor(rest)
        var step = ResizeStep()
        var processors: [any ImageProcessing] = []
        var leading: [any ImageProcessing] = []

        // debug/ draws thumbor's focal points on the image; Osprey finds none to draw.
        if segments.peek == "debug" { segments.advance() }
        if segments.peek == "meta" { segments.advance() }
        if let trim = segments.peek, trim == "trim" || trim.hasPrefix("trim:") {
            segments.advance()
            // trim[:top-left|bottom-right][:tolerance]: the background is that corner's pixel.
            let parts = trim.split(separator: ":").dropFirst()
            var threshold = 10.0
            if let last = parts.last, last != "top-left", last != "bottom-right" {
                guard let value = Double(last), (0...442).contains(value) else {
                    throw .badRequest("thumbor trim tolerance \"\(last)\" is not 0...442")
                }
                threshold = value
            }
            let corner: ImageProcessors.Trim.Background = parts.first == "bottom-right" ? .bottomRight : .topLeft
            leading.append(ImageProcessors.Trim(threshold: threshold, background: corner))
        }
        var cropOrigin = (x: 0, y: 0)
        if let crop = segments.peek, let rect = Self.parseCrop(crop) {
            segments.advance()
            cropOrigin = (rect.left, rect.top)
            guard rect.right > rect.left, rect.bottom > rect.top else {
                throw .badRequest("thumbor crop \(crop) is empty: the right/bottom corner must be beyond the left/top one")
            }
            leading.append(ImageProcessors.Crop(.rect(x: rect.left, y: rect.top, width: rect.right - rect.left, height: rect.bottom - rect.top)))
        }
        var adaptive = false
        switch segments.peek {
        case "fit-in":
            step.mode = .fit
            segments.advance()
        case "adaptive-fit-in":
            step.mode = .fit
            adaptive = true
            segments.advance()
        case "full-fit-in":
            step.mode = .cover
            segments.advance()
        default: break
        }
        if let size = segments.peek, try parseSize(size, into: &step) { segments.advance() }
        var horizontal: String?, vertical: String?
        if let h = segments.peek, ["left", "center", "right"].contains(h) {
            horizontal = h
            segments.advance()
        }
        if let v = segments.peek, ["top", "middle", "bottom"].contains(v) {
            vertical = v
            segments.advance()
        }
        step.gravity = Self.gravity(horizontal: horizontal, vertical: vertical)
        if segments.peek == "smart" {
            step.smart = true
            segments.advance()
        }

        var image = segments.remainder
        var filters: [ThumborFilter] = []
        if image.hasPrefix("filters:") {
            guard let end = image.range(of: ")/") else { throw .badRequest("thumbor filters segment \"\(image)\" is not followed by an image URL") }
            filters = try ThumborFilter.parseList(String(image[image.index(image.startIndex, offsetBy: 8)..<end.lowerBound]) + ")")
            image = String(image[end.upperBound...])
        }
        var adjustments = ThumborFilter.Adjustments()
        if filters.contains(where: { $0.name == "extract_focal" }), let embedded = Self.embeddedCrop(in: image) {
            image = embedded.image
            adjustments.focal = embedded.focal
        }
        var job = ImageJob(source: try source(image))
        job.metadata = metadata
        if step.mode != .fill, step.width > 0, step.height > 0 { adjustments.box = (step.width, step.height) }
        for filter in filters { try filter.apply(to: &job, adjustments: &adjustments, processors: &processors) }
        // fit-in modes never enlarge unless upscale() asks (thumbor); the fill mode does unless
        // no_upscale() asks.
        step.upscale = step.mode == .fill ? adjustments.upscale : adjustments.explicitUpscale
        // stretch() resizes to the size as given instead of cropping (not with fit-in).
        if adjustments.stretch && step.mode == .fill && step.width > 0 && step.height > 0 { step.mode = .force }
        step.adaptive = adaptive
        if let focal = adjustments.focal {
            // Given in the source's pixels: moved with a manual crop (not with trim, which is found later).
            step.focus = .region(
                left: focal.left - cropOrigin.x, top: focal.top - cropOrigin.y,
                right: focal.right - cropOrigin.x, bottom: focal.bottom - cropOrigin.y)
        }
        let resize = step.processors
        job.processors = leading + resize + processors
        // Watermark positions were counted among the filters' processors.
        for index in job.watermarks.indices { job.watermarks[index].index += leading.count + resize.count }
        return job
    }

    private func verify(first: Substring, rest: String, query: String?) throws(ServerError) {
        if first == "unsafe" {
            if signer != nil && !allowUnsafe {
                throw .forbidden("unsafe thumbor URLs are refused: a thumbor key is configured (pass --allow-unsafe to serve them)")
            }
            return
        }
        guard let signer else { throw .forbidden("signed thumbor URL but no thumbor key is configured; use /unsafe/ or set --thumbor-key") }
        var candidates = [rest]
        if let decoded = rest.removingPercentEncoding, decoded != rest { candidates.append(decoded) }
        if let query, !query.isEmpty {
            candidates.append(rest + "?" + query)
            if let decoded = (rest + "?" + query).removingPercentEncoding { candidates.append(decoded) }
        }
        // Every candidate is checked (no early exit) so the time does not depend on which matched.
        var valid = false
        for candidate in candidates where signer.isValid(first, for: candidate) { valid = true }
        guard valid else { throw .forbidden("thumbor signature \"\(first)\" does not match the path") }
    }

    /// Parses `W`x`H` with optional `-` and `orig`; `false` when `segment` is no size.
    private func parseSize(_ segment: String, into step: inout ResizeStep) throws(ServerError) -> Bool {
        guard let x = segment.firstIndex(of: "x") else { return false }
        func side(_ text: Substring) -> (value: Int, orig: Bool, flip: Bool)?? {
            var text = text
            let flip = text.hasPrefix("-")
            if flip { text = text.dropFirst() }
            if text.isEmpty { return (0, false, flip) }
            if text == "orig" { return (0, true, flip) }
            guard text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else { return .some(nil) }
            guard let value = Int(text) else { return .some(nil) }
            return (value, false, flip)
        }
        guard case let .some(w?) = side(segment[..<x]), case let .some(h?) = side(segment[segment.index(after: x)...]) else { return false }
        guard w.value <= 100_000, h.value <= 100_000 else { throw .badRequest("thumbor size \(segment) is out of range (at most 100000 per side)") }
        step.width = w.value
        step.height = h.value
        step.originalWidth = w.orig
        step.originalHeight = h.orig
        step.flipHorizontally = w.flip
        step.flipVertically = h.flip
        return true
    }

    static func parseCrop(_ segment: String) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let numbers = corners.flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }.map { Int($0) }
        guard numbers.count == 4, numbers.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
        return (numbers[0]!, numbers[1]!, numbers[2]!, numbers[3]!)
    }

    static func gravity(horizontal: String?, vertical: String?) -> ImageProcessors.Gravity {
        switch (horizontal ?? "center", vertical ?? "middle") {
        case ("left", "top"): .topLeft
        case ("right", "top"): .topRight
        case ("left", "bottom"): .bottomLeft
        case ("right", "bottom"): .bottomRight
        case ("left", _): .left
        case ("right", _): .right
        case (_, "top"): .top
        case (_, "bottom"): .bottom
        default: .center
        }
    }

    /// The image part as a source: an upload id (with ``uploads``), a key in ``s3Bucket``, a file under the local root
    /// (with ``localFiles``, when it has no scheme: percent-decoded once, kept exactly otherwise;
    /// ``LocalSource`` refuses what leaves the root), else ``sourceURL(_:)``.
    func source(_ text: String) throws(ServerError) -> URL {
        if uploads {
            let id = text.prefix { $0 != "/" }
            if UploadStore.isID(id) { return LocalSource.url(upload: String(id)) }
        }
        if let s3Bucket, !text.isEmpty, !text.contains("://"), !(text.removingPercentEncoding ?? "").contains("://") {
            return try S3Location(bucket: s3Bucket, key: text.removingPercentEncoding ?? text).url
        }
        if localFiles, !text.isEmpty, !text.contains("://"), !(text.removingPercentEncoding ?? "").contains("://") {
            return LocalSource.url(path: "/" + (text.removingPercentEncoding ?? text))
        }
        return try Self.sourceURL(text)
    }

    /// The image part as a URL: percent-decoded when it is a quoted URL, `http://` added when it
    /// has no scheme (as thumbor's HTTP loader does).
    static func sourceURL(_ text: String) throws(ServerError) -> URL {
        guard !text.isEmpty else { throw .badRequest("thumbor URL has no image URL") }
        var text = text
        if !text.contains("://"), let decoded = text.removingPercentEncoding, decoded.contains("://") { text = decoded }
        if !text.contains("://") { text = "http://" + text }
        return try SourceURL.parse(text)
    }

    /// Reads path segments one by one.
    struct Cursor {
        private var rest: Substring
        init(_ text: String) { rest = Substring(text) }
        var peek: String? {
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            return String(rest[..<slash])
        }
        mutating func advance() {
            if let slash = rest.firstIndex(of: "/") { rest = rest[rest.index(after: slash)...] }
        }
        var remainder: String { String(rest) }
    }
}
