/// The order in which queued downloads of equal priority start (AFImageDownloader's
/// `downloadPrioritization`). Default ``fifo``.
package enum DownloadExecutionOrder: Sendable, Hashable {
    /// First in, first out: the oldest queued task starts first.
    case fifo
    /// Last in, first out: the newest queued task starts first (useful for scrolling lists).
    case lifo
}
