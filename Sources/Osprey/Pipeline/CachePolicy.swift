/// How a request uses what is cached before it loads (``RequestOption/cachePolicy(_:)``), one state
/// instead of Kingfisher's four flags, so that no two of them can contradict each other:
/// Kingfisher's `forceRefresh` is ``reload``, `onlyFromCache` is ``cacheOnly``,
/// `fromMemoryCacheOrRefresh` is ``memoryOrLoad`` and `refreshCached` is ``revalidate``.
public enum CachePolicy: Sendable, Hashable {
    /// The memory cache, then the disk cache, then load. The default.
    case useCached
    /// The memory cache, then load: the disk cache is not read (except offline: see ``reload``).
    case memoryOrLoad
    /// Load, whatever is cached; the result is stored as usual. While the pipeline is told the
    /// network is unavailable (``ImagePipeline/handleNetworkChange(available:metered:)``), a
    /// network source is answered from the caches as with ``useCached`` instead of failing.
    case reload
    /// Never load: a miss of both caches fails with ``OspreyError/PipelineReason/imageNotExisting(key:)``.
    case cacheOnly
    /// Deliver the cached image at once, then revalidate it with its stored ETag / Last-Modified: a
    /// `304` extends the entry, a `200` replaces it and delivers the new image as a second result.
    /// A miss loads as ``useCached`` does.
    case revalidate

    /// Whether a cached image may answer the request (all but ``reload``).
    var readsCache: Bool { self != .reload }
    /// Whether the disk cache is read (``useCached``, ``cacheOnly``, ``revalidate``).
    var readsDisk: Bool { self != .reload && self != .memoryOrLoad }
    /// The policy as the fetch of a miss sees it: ``revalidate`` fetches as ``useCached`` does
    /// (its revalidation starts only from a hit), so the two share a download.
    var forFetch: CachePolicy { self == .revalidate ? .useCached : self }
}

/// Whether a target looks in the disk cache before `setImage` returns
/// (``RequestOption/diskLookup(_:)``).
public enum DiskLookup: Sendable, Hashable {
    /// The disk cache is read off the calling thread; a disk hit shows on a later turn. The default.
    case asynchronous
    /// The disk cache is read before `setImage` returns, so that a disk hit shows without a
    /// placeholder flash (Kingfisher's `loadDiskFileSynchronously`). Used only with a
    /// ``CachePolicy`` that reads the disk.
    case synchronous
}
