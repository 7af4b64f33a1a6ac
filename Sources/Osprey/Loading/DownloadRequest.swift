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
        self.timeout = timeout
        // Fields whose names all differ (ignoring case) are taken as they are: no new dictionary.
        if !Self.hasCaseDuplicates(headers) {
            self.headers = headers
        } else {
            self.headers = [:]
            for (name, value) in headers { setValue(value, forHTTPHeaderField: name) }
        }
    }

    /// A `GET` request whose header fields are known to have no two names that differ only in
    /// case (they came out of another request): taken as they are, without checking again.
    init(url: URL, uniqueHeaders: [String: String], timeout: Duration?) {
        self.url = url
        method = "GET"
        headers = uniqueHeaders
        self.timeout = timeout
    }

    /// Whether two names in `headers` differ only in case.
    private static func hasCaseDuplicates(_ headers: [String: String]) -> Bool {
        var index = headers.startIndex
        while index != headers.endIndex {
            let name = headers[index].key
            let next = headers.index(after: index)
            if headers[next...].contains(where: { HTTPHeaderName.equal($0.key, name) }) { return true }
            index = next
        }
        return false
    }

    /// Hashes the URL, the method and the number of header fields. Equal requests hash equally;
    /// requests for one URL rarely differ in anything else, so the fields themselves (a
    /// dictionary, hashed field by field) are left to `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(method)
        hasher.combine(headers.count)
    }

    /// The value of the header field `name` (case-insensitive), or `nil`.
    public func value(forHTTPHeaderField name: String) -> String? {
        HTTPHeaderName.value(of: name, in: headers)
    }

    /// Sets (or with `nil` removes) the header field `name`, replacing any field whose name
    /// differs only in case.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        for key in headers.keys where HTTPHeaderName.equal(key, name) {
            headers[key] = nil
        }
        if let value { headers[name] = value }
    }
}

/// A request as a dictionary key of the downloader, hashed once.
typealias RequestKey = HashedKey<DownloadRequest>

extension HashedKey where Key == DownloadRequest {
    /// The request this key stands for (borrowed, not copied).
    var request: DownloadRequest { _read { yield key } }
}
