/// The priority of a download in the downloader's queue. Default ``normal``.
///
/// A network task shared by several callers has the highest of their priorities. Changing a
/// caller's priority (``ImageTask/priority``) while its task is queued takes effect at once;
/// a running task is not affected.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// The lowest priority.
    case veryLow = 0
    /// Below ``normal``.
    case low = 1
    /// The default priority.
    case normal = 2
    /// Above ``normal``.
    case high = 3
    /// The highest priority.
    case veryHigh = 4

    /// Orders priorities from ``veryLow`` to ``veryHigh``.
    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The Swift task priority a network task of this priority runs at.
    var taskPriority: TaskPriority {
        switch self {
        case .veryLow: .background
        case .low: .utility
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
