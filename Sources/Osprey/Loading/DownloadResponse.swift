import Foundation

/// The metadata of a response: status, header fields and the final URL (after redirects).
public struct DownloadResponse: Sendable, Hashable {
    /// The HTTP status code. `200` for `file:`, `data:` and provider loads.
    public var statusCode: Int
    /// The header fields; look them up with ``value(forHTTPHeaderField:)`` (case-insensitive).
    /// When a field occurs more than once, the values are joined with `, `.
    public var headers: [String: String]
    /// The URL that answered, after redirects.
    public var url: URL

    /// Creates response metadata.
    public init(statusCode: Int, headers: [String: String] = [:], url: URL) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }

    /// The value of the header field `name` (case-insensitive), or `nil`.
    public func value(forHTTPHeaderField name: String) -> String? {
        HTTPHeaderName.value(of: name, in: headers)
    }

    /// `Content-Length` as a number, or `nil`.
    package var expectedContentLength: Int? {
        // Trimmed by hand: Foundation's trimmingCharacters bridges through NSString on Linux.
        value(forHTTPHeaderField: "Content-Length").flatMap { Int(HTTPHeaderName.trimmed($0)) }
    }

    /// The MIME type of `Content-Type`, lowercased, without parameters; `nil` when absent.
    package var mimeType: String? {
        guard let type = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let mime = type.split(separator: ";", maxSplits: 1).first.map(String.init) ?? type
        return HTTPHeaderName.trimmed(mime).lowercased()
    }

    /// The `ETag` and `Last-Modified` of this response as a cache validator, or `nil` when it has neither.
    package var validator: CacheValidator? {
        let etag = value(forHTTPHeaderField: "ETag")
        let modified = value(forHTTPHeaderField: "Last-Modified")
        return etag == nil && modified == nil ? nil : CacheValidator(etag: etag, lastModified: modified)
    }
}
