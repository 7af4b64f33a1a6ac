import Foundation

/// An ``ImageJob`` ready to serve: its source passed the allow-list, and the part of its
/// result-cache keys that no request header changes (source and processing) is built once, so
/// that a repeated URL (``JobResolver``'s memo) costs neither again.
struct PreparedJob: Sendable {
    let job: ImageJob
    /// `source|processing`: every result key of the job starts with it.
    let identity: String

    /// `job` prepared; 403 when its source is not in the allow-list of `sourceGuard`.
    init(_ job: ImageJob, sourceGuard: SourceGuard) throws(ServerError) {
        guard sourceGuard.isAllowListed(job.source) else {
            throw .forbidden("source \(job.source.absoluteString) is not in the allowed sources")
        }
        self.job = job
        identity = "\(job.source.absoluteString)|\(job.processingIdentifier)"
    }

    /// The result-cache key for the output settings: the format named by the URL, else the
    /// negotiation offer's key (`offer`, asked for only then) as `auto:OFFER` (`auto-png:OFFER`
    /// with ``ImageJob/keepsPNG``, `best:OFFER` with ``ImageJob/bestFormat``), and the per-format qualities when there are any.
    func resultKey(quality: Int, offer: () -> FormatNegotiator.Offer) -> String {
        let format = job.format.map(\.rawValue) ?? "\(job.bestFormat ? "best" : job.keepsPNG ? "auto-png" : "auto"):\(offer().key)"
        return "\(identity)|\(format):\(quality)\(formatQualityKey)|\(job.maxBytes ?? 0)"
    }

    /// `;fq=avif=50,jpeg=80`, or empty without per-format qualities.
    private var formatQualityKey: String {
        guard !job.formatQuality.isEmpty else { return "" }
        return ";fq=" + job.formatQuality.map { "\($0.key.rawValue)=\($0.value)" }.sorted().joined(separator: ",")
    }
}
