import Foundation

/// A validator of a cached copy, sent as a conditional request. A `304 Not Modified` answer is
/// reported as ``DownloadResult/isNotModified``.
public struct CacheValidator: Sendable, Hashable {
    /// The cached copy's `ETag`, sent as `If-None-Match`. Default `nil`.
    public var etag: String?
    /// The cached copy's `Last-Modified`, sent as `If-Modified-Since`. Default `nil`.
    public var lastModified: String?

    /// Creates a validator; pass at least one of the two values.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}
