import Foundation

/// A validator of a cached copy, sent as a conditional request. A `304 Not Modified` answer is
/// reported as ``DownloadResult/isNotModified``.
package struct CacheValidator: Sendable, Hashable {
    /// The cached copy's `ETag`, sent as `If-None-Match`. Default `nil`.
    package var etag: String?
    /// The cached copy's `Last-Modified`, sent as `If-Modified-Since`. Default `nil`.
    package var lastModified: String?

    /// Creates a validator; pass at least one of the two values.
    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

extension CacheValidator {
    /// The validators as a disk entry's `meta` (``DiskEntryFile``): an `etag:` and a
    /// `last-modified:` line; a value with a line break (no valid header has one) is left out.
    var diskMeta: Data {
        var text = ""
        if let etag, !etag.contains(where: \.isNewline) { text += "etag:\(etag)\n" }
        if let lastModified, !lastModified.contains(where: \.isNewline) { text += "last-modified:\(lastModified)\n" }
        return Data(text.utf8)
    }

    /// The validators kept in a disk entry's `meta`; `nil` when it holds none.
    init?(diskMeta: Data) {
        var etag: String?, lastModified: String?
        for line in String(decoding: diskMeta, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("etag:") { etag = String(line.dropFirst(5)) }
            if line.hasPrefix("last-modified:") { lastModified = String(line.dropFirst(14)) }
        }
        guard etag != nil || lastModified != nil else { return nil }
        self.init(etag: etag, lastModified: lastModified)
    }
}

extension CacheValidator {
    /// Makes `request` conditional: `If-None-Match` with the ETag, `If-Modified-Since` with the
    /// Last-Modified date (a `304` then means the cached copy is still good).
    func makeConditional(_ request: inout DownloadRequest) {
        request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
    }
}
