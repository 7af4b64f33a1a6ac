import Foundation

/// Measurements of one network task, shared by all its callers.
package struct DownloadMetrics: Sendable, Hashable {
    /// Body bytes received over the network (a resumed prefix is not counted).
    package var receivedBytes: Int
    /// Wall time from the start of the network task to its end.
    package var duration: Duration
    /// How many redirects were followed (summed over attempts).
    package var redirectCount: Int
    /// How many times the download was retried.
    package var retryCount: Int
    /// Whether a stored prefix of a previous attempt was resumed with a `206`.
    package var resumed: Bool

    /// Creates metrics.
    package init(receivedBytes: Int = 0, duration: Duration = .zero, redirectCount: Int = 0, retryCount: Int = 0, resumed: Bool = false) {
        self.receivedBytes = receivedBytes
        self.duration = duration
        self.redirectCount = redirectCount
        self.retryCount = retryCount
        self.resumed = resumed
    }
}
