import Foundation
import Osprey

/// What one image URL asks for, whichever grammar it came in: the thin front ends
/// (``ThumborURLParser``, ``ImgproxyURLParser``) produce this and the one processing path
/// (``ImageService``) runs it.
public struct ImageJob: Sendable {
    /// The source image URL: `http` or `https`, or a file (`local:///path`, `upload:///<id>`,
    /// read by the server's `LocalSource`).
    public var source: URL
    /// The processor chain, run in order through ``ImagePipeline``; a resize step comes first
    /// whenever the URL asks for one, so that the pipeline can plan the decode from it.
    public var processors: [any ImageProcessing]
    /// The output format the URL names; `nil` lets ``FormatNegotiator`` choose from `Accept`.
    public var format: ImageFormat?
    /// The encoder quality (1...100); `nil` uses the server's default (80).
    public var quality: Int?
    /// Largest encoded result, in bytes (thumbor's `max_bytes`): quality is lowered until the
    /// result fits. `nil`: no limit.
    public var maxBytes: Int?

    /// The answer's `max-age` in seconds (thumbor's `max_age`), in place of the server's
    /// `--max-age`; the origin's own limit still applies. Default `nil`: the server's.
    public var maxAge: Int?

    /// When the URL stops being served (imgproxy's `exp`): a request after it is a 404.
    /// Default `nil`: never.
    public var expires: Date?

    /// Whether a PNG source stays PNG when the URL names no format and the negotiation would
    /// answer JPEG (thumbor's `autojpg(false)`). Default `false`: an image without alpha is
    /// answered as JPEG (or a modern format the client accepts).
    public var keepsPNG = false

    /// imgproxy's `f:best`: the result is encoded in every format the client accepts (the
    /// negotiation's offer, and JPEG or PNG) and the smallest is answered. Default `false`.
    public var bestFormat = false

    /// Quality per output format (imgproxy's `fq`), used when ``quality`` is `nil` and the
    /// answer is in one of these formats. Default none.
    public var formatQuality: [ImageFormat: Int] = [:]

    /// thumbor's `meta/`: JSON saying what the job does to its source (``ThumborMetadata``)
    /// instead of the image. Default `nil`: the image.
    public var metadata: Metadata?

    /// A `meta/` request: the JSON, wrapped in a call of ``callback`` (JSONP) when it is set.
    public struct Metadata: Sendable, Equatable {
        /// The JavaScript function the JSON is passed to (the `callback` query argument). Default `nil`.
        public var callback: String?

        /// A metadata request (`callback` default `nil`: plain JSON).
        public init(callback: String? = nil) {
            self.callback = callback
        }
    }

    /// `/info`: JSON describing the source (``ImageInfo``) instead of the image. Default `false`.
    public var info = false

    /// Source formats answered with the source's own bytes, unprocessed, when the URL names no
    /// other output format (imgproxy's `skp`). Default none.
    public var skipProcessing: Set<ImageFormat> = []

    /// The answer's `Content-Disposition` (imgproxy sends one with every image). Default `nil`:
    /// none (thumbor URLs).
    public var disposition: Disposition?

    /// How an answer is offered for saving: `inline` or `attachment`, and the file name's stem;
    /// its extension is the answer's format's.
    public struct Disposition: Sendable, Equatable {
        /// The file name without its extension.
        public var stem: String
        /// `attachment` (a browser saves the file) rather than `inline`. Default `false`.
        public var attachment: Bool

        /// A disposition for `stem` (default `attachment` false).
        public init(stem: String, attachment: Bool = false) {
            self.stem = stem
            self.attachment = attachment
        }

        /// The header's value for an answer in `format`: `inline; filename="STEM.EXT"`, the
        /// stem's quotes, controls and non-ASCII characters percent-encoded.
        public func value(for format: ImageFormat) -> String {
            var allowed = CharacterSet(charactersIn: UnicodeScalar(0x20)...UnicodeScalar(0x7E))
            allowed.remove(charactersIn: "\"%\\")
            let name = stem.addingPercentEncoding(withAllowedCharacters: allowed) ?? "image"
            return "\(attachment ? "attachment" : "inline"); filename=\"\(name).\(format.fileExtension)\""
        }
    }

    /// Watermarks to fetch (through the same source rules) and insert into ``processors``.
    /// Default none.
    public var watermarks: [WatermarkRequest] = []

    /// A job fetching `source` and running `processors`.
    public init(
        source: URL, processors: [any ImageProcessing] = [], format: ImageFormat? = nil,
        quality: Int? = nil, maxBytes: Int? = nil
    ) {
        self.source = source
        self.processors = processors
        self.format = format
        self.quality = quality
        self.maxBytes = maxBytes
    }

    /// The processor chain as one processor (the identity when empty).
    public var processor: any ImageProcessing {
        processors.isEmpty ? ImageProcessors.Identity() : ImageProcessors.Composition(processors)
    }

    /// The processors' identifiers with the watermarks', for cache keys.
    var processingIdentifier: String {
        ([processor.identifier] + watermarks.map(\.identifier)).joined(separator: "|")
            + (skipProcessing.isEmpty ? "" : "|skp:" + skipProcessing.map(\.rawValue).sorted().joined(separator: ":"))
            + (metadata == nil ? "" : "|meta") + (info ? "|info" : "")
    }
}

/// A watermark (or a frame) a URL asks for: fetched when the job runs, then drawn by
/// `ImageProcessors.Watermark` (`ImageProcessors.NinePatch`) at ``index`` in the processor chain.
public struct WatermarkRequest: Sendable {
    /// The watermark image's URL.
    public var url: URL
    /// Where in ``ImageJob/processors`` the watermark step goes.
    public var index: Int
    /// Horizontal position.
    package var x: ImageProcessors.Watermark.Position
    /// Vertical position.
    package var y: ImageProcessors.Watermark.Position
    /// Transparency, 0...100.
    public var transparency: Int
    /// Largest width in percent of the image (`nil`: as is).
    public var widthRatio: Double?
    /// Largest height in percent of the image (`nil`: as is).
    public var heightRatio: Double?
    /// Whether the image is a nine-patch drawn around the result (thumbor's `frame`) rather than
    /// a watermark; the positions, transparency and ratios are then unused. Default `false`.
    public var isFrame = false
    /// imgproxy's placement, which replaces ``x``, ``y`` and the ratios when set. Default `nil`.
    public var imgproxy: ImgproxyWatermarkPlacement?

    /// `watermark` or `frame`, for error reasons.
    var kind: String { isFrame ? "frame" : "watermark" }

    var identifier: String {
        if isFrame { return "frame@\(index):\(url.absoluteString)" }
        if let imgproxy { return "imgproxy-watermark@\(index):\(url.absoluteString):\(imgproxy.identifier):\(transparency)" }
        return "watermark@\(index):\(url.absoluteString):\(x):\(y):\(transparency):\(widthRatio ?? -1):\(heightRatio ?? -1)"
    }

    /// The processor drawing `mark`.
    func processor(mark: Image) -> any ImageProcessing {
        if isFrame { return ImageProcessors.NinePatch(patch: mark, name: url.absoluteString) }
        if let imgproxy { return WatermarkStep(mark: mark, name: url.absoluteString, placement: imgproxy, transparency: transparency) }
        return ImageProcessors.Watermark(
            mark: mark, name: url.absoluteString, x: x, y: y, transparency: transparency,
            widthRatio: widthRatio, heightRatio: heightRatio)
    }
}
