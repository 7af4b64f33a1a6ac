import Foundation

/// The body and metadata of a finished network task, before per-caller data modifiers.
struct Fetched: Sendable {
    var data: Data
    var response: DownloadResponse
    var notModified: Bool
}

/// A network task as a worker runs it.
struct Transfer: Sendable {
    let id: UInt64
    let request: RequestKey
    let settings: TransferSettings
}

/// The per-task choices a caller may override: how redirects and retries are handled.
struct TransferSettings: Sendable {
    var redirectHandler: RedirectHandler
    var retryStrategy: (any RetryStrategy)?
}
