import Foundation

/// Progressive previews of progressive JPEGs while they download (Kingfisher's
/// `ImageProgressive`, SDWebImage's `progressiveLoad`), set per request with
/// ``RequestOption/progressiveJPEG(_:)``. Off by default: a request without the option decodes
/// once, when the last byte has arrived.
///
/// With the option, a network download whose body is a progressive JPEG (SOF2) is watched as it
/// arrives. Each time a scan completes, the scans so far are decoded (incrementally: each scan
/// once) into a preview that goes through the request's processors at the size the final image
/// will have, and is delivered before the final image (``ImageResult/preview``). At most one preview
/// decode runs at a time for a download, chunks that arrive meanwhile are skipped, and a new one
/// starts no sooner than ``interval`` after the last one started; with ``limitsDecodeCost`` (the
/// default) each preview has twice the bytes of the last and none comes from more than half the
/// body. The final image ends the previews: none is delivered after it. Baseline JPEGs and other
/// formats get no previews and cost one look at their first segments. Previews are never written
/// to a cache.
///
/// ```swift
/// for try await result in pipeline.images(for: .url(url), options: [.progressiveJPEG(.init())]) {
///     view.show(result.image)  // previews, then the final image
/// }
/// ```
public struct ProgressiveJPEG: Sendable, Hashable {
    /// Whether previews are made. Default `true` (the option's presence turns them on; `false`
    /// turns them off again over a pipeline's defaults).
    public var isEnabled: Bool
    /// The shortest time between the starts of two preview decodes, in seconds. Default 0.5.
    /// 0 decodes a preview at every scan boundary that arrives while no preview decode runs.
    public var interval: TimeInterval
    /// Bound the previews' decoding work by the body's bytes. Default `true`.
    ///
    /// Osprey's decoder decodes each scan once, as its bytes are handed over, and each preview is
    /// one output pass over the coefficients so far (inverse DCT, upsampling, colour conversion:
    /// for a 12 MP photo about a fifth of its whole decode). When set, a preview is made only from
    /// at least twice the bytes of the one before, and from no more than half the body (when its
    /// length is announced): two or three previews over the first half of the download, which
    /// together cost less than the final decode.
    /// The same rule keeps the bytes of a decoder that decodes each prefix whole (another
    /// ``ImageDecoding``, or a CMYK JPEG) within the body's. `false`: a preview at every scan
    /// boundary that ``interval`` allows.
    public var limitsDecodeCost: Bool

    /// Settings; `isEnabled` defaults to `true`, `interval` to 0.5 s, `limitsDecodeCost` to `true`.
    public init(isEnabled: Bool = true, interval: TimeInterval = 0.5, limitsDecodeCost: Bool = true) {
        self.isEnabled = isEnabled
        self.interval = interval
        self.limitsDecodeCost = limitsDecodeCost
    }

    /// Previews on, every 0.5 s at most.
    public static let `default` = ProgressiveJPEG()
}
