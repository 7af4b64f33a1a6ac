import Foundation

extension ImageDownloader {
    /// Settings of an ``ImageDownloader``. Every property states its default.
    public struct Configuration: Sendable {
        /// Maximum number of network tasks running at once; the rest wait in a queue. Default 6.
        public var maximumConcurrentDownloads: Int = 6
        /// Order of queued tasks of equal priority. Default ``DownloadExecutionOrder/fifo``.
        package var executionOrder: DownloadExecutionOrder = .fifo
        /// Timeout covering a whole download, from the moment its network task leaves the queue:
        /// connecting, redirects, retries and their delays, and the body. Default 15 s. Overridable per download.
        public var timeout: Duration = .seconds(15)
        /// Largest accepted body, in bytes, enforced while streaming (and up front from
        /// `Content-Length`). Default 100 MiB.
        public var maximumResponseSize: Int = 100 * 1024 * 1024
        /// Maximum number of redirects followed per attempt. Default 10.
        package var maximumRedirects: Int = 10
        /// Decides each redirect. Default `nil`: follow as proposed.
        package var redirectHandler: RedirectHandler?
        /// Header fields sent with every request. Default `Accept: image/*,*/*;q=0.8` and
        /// `User-Agent: Osprey/<version>` (see `defaultHeaders`). Change them with
        /// `setHeader(_:for:)`, which matches names case-insensitively; two keys differing only
        /// in case are duplicates, and which one is sent is unspecified.
        public var headers: [String: String] = Configuration.defaultHeaders
        /// Basic-auth credentials for every request (a request's own override them). Default `nil`.
        package var credentials: DownloadCredentials?
        /// A modifier applied to every request before the caller's. Default `nil`.
        package var requestModifier: RequestModifier?
        /// Status codes that count as success. Default `200..<300` (so a `3xx` that is not followed,
        /// or any `4xx`/`5xx`, fails with ``OspreyError/DownloadReason/invalidStatusCode(_:response:)``).
        /// `206` is always accepted for a resumed download and `304` for a conditional one.
        package var acceptableStatusCodes: Set<Int> = Set(200..<300)
        /// MIME types (lowercased, no parameters, `image/*` style wildcards allowed) that count as
        /// success. Default `nil`: any type; the body is still sniffed (``validatesImageData``).
        package var acceptableContentTypes: Set<String>?
        /// Whether a body whose magic bytes name no known image format fails with
        /// ``OspreyError/DownloadReason/invalidResponse(url:reason:)``. Default `true`.
        package var validatesImageData: Bool = true
        /// Retries transport failures, 5xx and 429. Default `nil`: no retries.
        package var retryStrategy: (any RetryDeciding)?
        /// Whether permanent failures (invalid URL, non-image data, unacceptable content type, 4xx
        /// other than 408 and 429) put the URL on the failed-URL list, making later requests fail fast
        /// with ``OspreyError/DownloadReason/previouslyFailed(url:)``. Default `true`.
        public var remembersFailedURLs: Bool = true
        /// Whether partial data of a failed or cancelled download is kept to be resumed with
        /// `Range`/`If-Range` (only when the server sent `Accept-Ranges: bytes` and an `ETag` or
        /// `Last-Modified`). Default `true`.
        public var allowsResumableDownloads: Bool = true
        /// Maximum number of partial downloads kept for resuming. Default 32.
        package var maximumResumableEntries: Int = 32

        /// `Accept: image/*,*/*;q=0.8` and `User-Agent: Osprey/<version> (Linux)`.
        package static let defaultHeaders: [String: String] = [
            "Accept": "image/*,*/*;q=0.8",
            "User-Agent": "Osprey/\(ospreyVersion) (Linux)"
        ]

        /// Creates the default configuration.
        public init() {}

        /// Sets (or with `nil` removes) the default header `name`, replacing any whose name differs
        /// only in case.
        package mutating func setHeader(_ value: String?, for name: String) {
            for key in headers.keys where HTTPHeaderName.equal(key, name) {
                headers[key] = nil
            }
            if let value { headers[name] = value }
        }
    }
}
