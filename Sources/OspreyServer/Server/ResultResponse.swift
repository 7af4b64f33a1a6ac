import Foundation
import HTTPTypes

/// The answer for a cached or produced result: status, headers and body, the same whether
/// ``ImageMiddleware`` sends it through Hummingbird or ``MemoryHitHandler`` on the event loop.
struct ResultResponse {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    /// The bytes to send; `nil` for `304` and `HEAD`.
    var body: Data?

    /// `entry` for a `GET` or `HEAD` with `ifNoneMatch`: `Cache-Control` from the entry's policy and
    /// `maxAge`, `ETag`, `Last-Modified`, `Vary: Accept` when the format was `negotiated`, then
    /// `304` when `ifNoneMatch` names the ETag, else `200` with `Content-Type`, `Content-Length`
    /// and the `disposition`, if any.
    init(entry: ResultCache.Entry, negotiated: Bool, isHead: Bool, ifNoneMatch: String?, maxAge: Int, disposition: ImageJob.Disposition?) {
        var headers: HTTPFields = [:]
        let policy = entry.policy
        let age = min(maxAge, policy.maxAge ?? .max)
        headers[.cacheControl] = policy.noStore ? "no-store" : "\(policy.isPrivate ? "private" : "public"), max-age=\(age)"
        headers[.eTag] = entry.etag
        headers[.lastModified] = entry.lastModified
        if negotiated { headers[.vary] = "Accept" }
        if let ifNoneMatch, Self.matches(ifNoneMatch, etag: entry.etag) {
            self.init(status: .notModified, headers: headers, body: nil)
            return
        }
        headers[.contentType] = entry.format.mimeType
        headers[.contentLength] = String(entry.data.count)
        if let disposition { headers[.contentDisposition] = disposition.value(for: entry.format) }
        self.init(status: .ok, headers: headers, body: isHead ? nil : entry.data)
    }

    private init(status: HTTPResponse.Status, headers: HTTPFields, body: Data?) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether an `If-None-Match` value names `etag` (or is `*`); weak comparison, as RFC 9110 asks.
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}
