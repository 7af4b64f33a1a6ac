import Foundation

/// What one caller receives from a successful download.
public struct DownloadResult: Sendable, Hashable {
    /// The body, after the caller's ``DownloadOptions/responseDataModifier``. Empty when
    /// ``isNotModified``.
    public var data: Data
    /// The response metadata (synthesised with status `200` for `file:`, `data:` and providers).
    public var response: DownloadResponse
    /// `true` when the server answered `304 Not Modified` (normally to a conditional request, see
    /// ``DownloadOptions/validator``): the caller's cached copy is still valid and ``data`` is empty.
    public var isNotModified: Bool
    /// Measurements of the network task.
    public var metrics: DownloadMetrics

    /// Creates a result.
    public init(data: Data, response: DownloadResponse, isNotModified: Bool = false, metrics: DownloadMetrics = .init()) {
        self.data = data
        self.response = response
        self.isNotModified = isNotModified
        self.metrics = metrics
    }
}
