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
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `Content-Length` as a number, or `nil`.
    public var expectedContentLength: Int? {
        value(forHTTPHeaderField: "Content-Length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The MIME type of `Content-Type`, lowercased, without parameters; `nil` when absent.
    public var mimeType: String? {
        guard let type = value(forHTTPHeaderField: "Content-Type") else { return nil }
        let mime = type.split(separator: ";", maxSplits: 1).first.map(String.init) ?? type
        return mime.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The `ETag` and `Last-Modified` of this response as a ``CacheValidator``, or `nil` when it has neither.
    public var validator: CacheValidator? {
        let etag = value(forHTTPHeaderField: "ETag")
        let modified = value(forHTTPHeaderField: "Last-Modified")
        return etag == nil && modified == nil ? nil : CacheValidator(etag: etag, lastModified: modified)
    }
}

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

/// What one caller receives from a successful download.
public struct DownloadResult: Sendable, Hashable {
    /// The body, after the caller's ``DownloadOptions/responseDataModifier``. Empty when
    /// ``isNotModified``.
    public var data: Data
    /// The response metadata (synthesised with status `200` for `file:`, `data:` and providers).
    public var response: DownloadResponse
    /// `true` when the server answered a conditional request with `304 Not Modified`: the
    /// caller's cached copy is still valid and ``data`` is empty.
    public var isNotModified: Bool
    /// Measurements of the network task.
    public var metrics: DownloadMetrics

    /// Creates a result.
    public init(data: Data, response: DownloadResponse, isNotModified: Bool = false, metrics: DownloadMetrics = .init()) {
        self.data = data
        self.response = response
        self.isNotModified = isNotModified
        self.metrics = metrics
    }
}
