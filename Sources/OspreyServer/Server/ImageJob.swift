import Foundation
import Osprey

/// What one image URL asks for, whichever grammar it came in: the thin front ends
/// (``ThumborURLParser``, ``ImgproxyURLParser``) produce this and the one processing path
/// (``ImageService``) runs it.
public struct ImageJob: Sendable {
    /// The source image URL (already checked to be `http` or `https`).
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

    /// A job fetching `source` and running `processors`.
    public init(source: URL, processors: [any ImageProcessing] = [], format: ImageFormat? = nil,
                quality: Int? = nil, maxBytes: Int? = nil) {
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

    /// The key of the encoded result: source, processing and the output settings.
    func resultKey(format: ImageFormat, quality: Int) -> String {
        "\(source.absoluteString)|\(processor.identifier)|\(format.rawValue):\(quality)|\(maxBytes ?? 0)"
    }
}
