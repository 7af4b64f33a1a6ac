import AsyncHTTPClient
import Foundation
import NIOCore
import Osprey

/// A ``DataLoading`` that sends the requests of `s3://` sources (their internal URLs, see
/// ``S3Location``) to the object store, signed, and every other request through `base`.
///
/// The pipeline's data stage sees an ordinary origin: it caches the object with its `ETag`,
/// revalidates it with `If-None-Match` once stale (a `304` keeps the cached bytes), and enforces
/// the download's size limit and timeout on the streamed body. A `404` passes through (the
/// request's answer is 404); any other error status is thrown with S3's code and message as the
/// reason (`SignatureDoesNotMatch`, `AccessDenied`, `NoSuchBucket`, a wrong region's
/// `PermanentRedirect`), answered 502. The store is configured by the operator, so it is not
/// subject to the source guard's address checks; which buckets are served is
/// (``SourceGuard/allowedSources`` with `s3://bucket/` entries).
struct S3SourceLoader: DataLoading {
    /// The object store's client; `nil`: `s3://` sources are not configured (refused with 403).
    let client: S3Client?
    /// The loader of every other request.
    let base: any DataLoading

    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        guard S3Location.isInternal(request.url) else { return try await base.send(request) }
        guard let location = S3Location(internal: request.url) else {
            throw ServerError.badRequest("source \(request.url.absoluteString) is not a valid s3:// source")
        }
        guard let client else { throw ServerError.forbidden("\(SourceGuard.refusalMarker): s3:// sources are not configured") }
        guard request.method == "GET" || request.method == "HEAD" else {
            throw ServerError.badRequest("\(request.method) of \(location) is not a source read")
        }
        // The data stage's conditional headers are passed on and signed; others (Accept,
        // User-Agent) mean nothing to the store.
        let conditional = ["If-None-Match", "If-Modified-Since"].compactMap { name in
            request.value(forHTTPHeaderField: name).map { (name: name, value: $0) }
        }
        let outgoing = client.request(request.method, location, headers: conditional)
        let response: HTTPClientResponse
        do throws(S3Error) {
            response = try await client.execute(outgoing, location: location, method: request.method, timeout: .seconds(24 * 3600))
        } catch {
            throw ServerError(status: 502, reason: error.description)
        }
        let status = Int(response.status.code)
        guard (200..<300).contains(status) || status == 304 || status == 404 else {
            throw ServerError(
                status: 502,
                reason: await S3Client.failure(response, location: location, method: request.method, anonymous: client.isAnonymous).description)
        }
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        }
        let head = DownloadResponse(statusCode: status, headers: headers, url: request.url)
        return (response: head, body: DataChunks(response.body) { Data($0.readableBytesView) })
    }
}
