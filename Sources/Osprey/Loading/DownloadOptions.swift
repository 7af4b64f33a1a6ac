import Foundation

/// Per-caller options of a download. Options that change the request (headers, credentials,
/// validator, timeout, request modifier) take part in coalescing; the others apply to this caller
/// only.
package struct DownloadOptions: Sendable {
    /// The caller's priority. Default ``DownloadPriority/normal``.
    package var priority: DownloadPriority = .normal
    /// Where the completion-handler form calls back. Default ``CallbackQueue/default`` (a shared
    /// serial queue). The async form ignores it and resumes the awaiting task directly.
    package var callbackQueue: CallbackQueue = .default
    /// Extra header fields for this request, set after the downloader's default headers. Default none.
    package var headers: [String: String] = [:]
    /// Basic-auth credentials for this request, overriding the downloader's. Default `nil`.
    package var credentials: DownloadCredentials?
    /// Makes the request conditional (`If-None-Match` / `If-Modified-Since`). Default `nil`.
    package var validator: CacheValidator?
    /// Overrides the downloader's whole-download timeout. Default `nil` (the downloader's, 15 s).
    package var timeout: Duration?
    /// Edits the request after the downloader's own modifier. Default `nil`.
    package var requestModifier: RequestModifier?
    /// Transforms the downloaded data for this caller only. Default `nil`.
    package var responseDataModifier: ResponseDataModifier?
    /// Downloads even if the URL is on the failed-URL list (SDWebImage's `retryFailed`); a success
    /// removes it from the list. Default `false`.
    package var retryFailed: Bool = false
    /// Overrides the downloader's redirect handler for a network task this caller starts (a caller
    /// that joins a running task shares that task's). Default `nil`: the downloader's.
    package var redirectHandler: RedirectHandler?
    /// Overrides the downloader's retry strategy for a network task this caller starts (a caller
    /// that joins a running task shares that task's). Default `nil`: the downloader's.
    package var retryStrategy: (any RetryDeciding)?
    /// Sees the whole body received so far (and the announced length) after each chunk, on the
    /// download's own thread, before the next chunk is read: the pipeline's progressive previews
    /// (``ProgressivePreviewer``). It must return quickly and must not keep the `Data` (keeping
    /// it would make the next chunk's append copy the body). `nil` (the default) costs nothing.
    var bodyObserver: (@Sendable (_ body: Data, _ expected: Int?) -> Void)?

    /// Creates options; every parameter has the default stated on its property.
    package init(
        priority: DownloadPriority = .normal, callbackQueue: CallbackQueue = .default,
        headers: [String: String] = [:], credentials: DownloadCredentials? = nil,
        validator: CacheValidator? = nil, timeout: Duration? = nil,
        requestModifier: RequestModifier? = nil, responseDataModifier: ResponseDataModifier? = nil,
        retryFailed: Bool = false, redirectHandler: RedirectHandler? = nil, retryStrategy: (any RetryDeciding)? = nil
    ) {
        self.redirectHandler = redirectHandler
        self.retryStrategy = retryStrategy
        self.priority = priority
        self.callbackQueue = callbackQueue
        self.headers = headers
        self.credentials = credentials
        self.validator = validator
        self.timeout = timeout
        self.requestModifier = requestModifier
        self.responseDataModifier = responseDataModifier
        self.retryFailed = retryFailed
    }
}
