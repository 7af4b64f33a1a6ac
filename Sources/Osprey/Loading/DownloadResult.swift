import Foundation

/// What one caller receives from a successful download.
package struct DownloadResult: Sendable, Hashable {
    /// The body, after the caller's ``DownloadOptions/responseDataModifier``. Empty when
    /// ``isNotModified``.
    package var data: Data
    /// The response metadata (synthesised with status `200` for `file:`, `data:` and providers).
    package var response: DownloadResponse
    /// `true` when the server answered `304 Not Modified` (normally to a conditional request, see
    /// ``DownloadOptions/validator``): the caller's cached copy is still valid and ``data`` is empty.
    package var isNotModified: Bool
    /// Measurements of the network task.
    package var metrics: DownloadMetrics

    /// Creates a result.
    package init(data: Data, response: DownloadResponse, isNotModified: Bool = false, metrics: DownloadMetrics = .init()) {
        self.data = data
        self.response = response
        self.isNotModified = isNotModified
        self.metrics = metrics
    }
}
