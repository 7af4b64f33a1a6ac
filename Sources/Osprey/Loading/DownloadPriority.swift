/// The priority of a download in the downloader's queue. Default ``normal``.
///
/// A network task shared by several callers has the highest of their priorities. Changing a
/// caller's priority (``DownloadTask/priority``) while its task is queued takes effect at once;
/// a running task is not affected.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    case veryLow = 0
    case low = 1
    case normal = 2
    case high = 3
    case veryHigh = 4

    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The order in which queued downloads of equal priority start (AFImageDownloader's
/// `downloadPrioritization`). Default ``fifo``.
public enum DownloadExecutionOrder: Sendable, Hashable {
    /// First in, first out: the oldest queued task starts first.
    case fifo
    /// Last in, first out: the newest queued task starts first (useful for scrolling lists).
    case lifo
}
