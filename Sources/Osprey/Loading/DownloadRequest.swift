import Foundation

/// An HTTP request as the downloader sends it: what a ``RequestModifier`` edits and what a
/// ``DataLoading`` implementation performs.
///
/// Two requests that compare equal are *the same download*: ``ImageDownloader`` coalesces
/// concurrent callers whose final requests (after default headers, credentials, validators and
/// request modifiers) are equal into one network task.
public struct DownloadRequest: Sendable, Hashable {
    /// The URL to load.
    public var url: URL
    /// The HTTP method. Default `GET`.
    public var method: String
    /// Header fields. Names are matched case-insensitively by ``value(forHTTPHeaderField:)`` and
    /// ``setValue(_:forHTTPHeaderField:)``; set them through those to avoid duplicates.
    public private(set) var headers: [String: String]
    /// The timeout for the whole download (all redirects, retries and the body). `nil`, the
    /// default, uses ``ImageDownloader/Configuration/timeout`` (15 s unless configured).
    public var timeout: Duration?

    /// Creates a `GET` request for `url` with no header fields and the downloader's timeout.
    public init(url: URL, method: String = "GET", headers: [String: String] = [:], timeout: Duration? = nil) {
        self.url = url
        self.method = method
        self.headers = [:]
        self.timeout = timeout
        for (name, value) in headers { setValue(value, forHTTPHeaderField: name) }
    }

    /// The value of the header field `name` (case-insensitive), or `nil`.
    public func value(forHTTPHeaderField name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Sets (or with `nil` removes) the header field `name`, replacing any field whose name
    /// differs only in case.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        for key in headers.keys where key.caseInsensitiveCompare(name) == .orderedSame {
            headers[key] = nil
        }
        if let value { headers[name] = value }
    }
}

/// A user name and password sent as HTTP basic authentication (`Authorization: Basic …`).
public struct DownloadCredentials: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials for `user` and `password`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value: `Basic` and base64 of `user:password`.
    public var authorizationHeaderValue: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

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
