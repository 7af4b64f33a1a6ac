import Foundation

/// Measurements of one network task, shared by all its callers.
public struct DownloadMetrics: Sendable, Hashable {
    /// Body bytes received over the network (a resumed prefix is not counted).
    public var receivedBytes: Int
    /// Wall time from the start of the network task to its end.
    public var duration: Duration
    /// How many redirects were followed (summed over attempts).
    public var redirectCount: Int
    /// How many times the download was retried.
    public var retryCount: Int
    /// Whether a stored prefix of a previous attempt was resumed with a `206`.
    public var resumed: Bool

    /// Creates metrics.
    public init(receivedBytes: Int = 0, duration: Duration = .zero, redirectCount: Int = 0, retryCount: Int = 0, resumed: Bool = false) {
        self.receivedBytes = receivedBytes
        self.duration = duration
        self.redirectCount = redirectCount
        self.retryCount = retryCount
        self.resumed = resumed
    }
}
