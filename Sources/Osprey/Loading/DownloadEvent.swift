import Foundation

/// Something that happened in an ``ImageDownloader``, delivered by ``ImageDownloader/events()``.
package enum DownloadEvent: Sendable {
    /// A request is about to be sent (once per attempt and per redirect hop).
    case willDownload(DownloadRequest)
    /// A final (non-redirect) response head arrived.
    case didReceiveResponse(DownloadResponse, request: DownloadRequest)
    /// A network task finished, for all its callers. `url` is the originally requested URL.
    case didFinish(url: URL, result: Result<DownloadResponse, OspreyError>, metrics: DownloadMetrics)
}
