/// Where a request stores the processed image it made (``RequestOption/storage(_:)``).
public enum CacheStorage: Sendable, Hashable {
    /// The target cache's memory and disk. The default.
    case memoryAndDisk
    /// The target cache's memory only (Kingfisher's `cacheMemoryOnly`).
    case memory
    /// Nowhere: the image is delivered and not kept (a server that keeps its encoded results
    /// itself, or an image shown once).
    case none

    /// Whether the processed image goes to the disk.
    var toDisk: Bool { self == .memoryAndDisk }
}

/// Whether a request also stores the original bytes it loaded (``RequestOption/originalStorage(_:)``),
/// under the source's key in the original cache, so that another processor reuses them without a
/// download.
public enum OriginalStorage: Sendable, Hashable {
    /// Only the processed image is stored (as ``RequestOption/storage(_:)`` says). The default.
    case none
    /// The original bytes go to the original cache's disk, with the response's validators, whatever
    /// ``RequestOption/storage(_:)`` says about the processed image (Kingfisher's `cacheOriginalImage`).
    case disk
}

/// When a request's result is delivered relative to its cache writes (``RequestOption/cacheWrites(_:)``).
public enum CacheWrites: Sendable, Hashable {
    /// At once, while the writes run in the background. The default.
    case inBackground
    /// After the writes finish (Kingfisher's `waitForCache`): a request that comes next finds the
    /// entries on disk.
    case beforeDelivery
}
