import Foundation

/// The body and metadata of a finished network task, before per-caller data modifiers.
struct Fetched: Sendable {
    var data: Data
    var response: DownloadResponse
    var notModified: Bool
}

/// What a network task hands each of its callers: the body before their data modifiers, how the
/// transfer went, and the URL it asked for (after request modifiers: a data modifier's failure
/// names it).
struct Transferred: Sendable {
    var fetched: Fetched
    var metrics: DownloadMetrics
    var url: URL
}

/// A network task as a worker runs it.
struct Transfer: Sendable {
    let id: UInt64
    let request: RequestKey
    let settings: TransferSettings
    /// Its callers, told of progress and the body so far.
    let job: ImageDownloader.DownloadJob
}

/// The per-task choices a caller may override: how redirects and retries are handled.
struct TransferSettings: Sendable {
    var redirectHandler: RedirectHandler
    var retryStrategy: (any RetryDeciding)?
}
