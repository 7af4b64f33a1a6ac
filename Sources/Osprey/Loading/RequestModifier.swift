import Foundation

/// Edits a request before it is sent (Kingfisher's `ImageDownloadRequestModifier`, synchronous or
/// asynchronous). Returning `nil` cancels the download with
/// ``OspreyError/DownloadReason/emptyRequest(url:)``; nothing is sent.
///
/// Modifiers run before coalescing, for every caller: callers whose modified requests are equal share
/// one network task. A downloader-wide modifier (`ImageDownloader.Configuration.requestModifier`)
/// runs first, then the caller's (``RequestOption/requestModifier(_:)``).
public struct RequestModifier: Sendable {
    enum Body: Sendable {
        case sync(@Sendable (DownloadRequest) -> DownloadRequest?)
        case async(@Sendable (DownloadRequest) async -> DownloadRequest?)
    }

    let body: Body

    /// A modifier that runs synchronously, at the call to `download`.
    public static func sync(_ modify: @escaping @Sendable (DownloadRequest) -> DownloadRequest?) -> RequestModifier {
        RequestModifier(body: .sync(modify))
    }

    /// A modifier that may suspend (e.g. to fetch a token). The caller is registered with the
    /// downloader once it returns.
    public static func async(_ modify: @escaping @Sendable (DownloadRequest) async -> DownloadRequest?) -> RequestModifier {
        RequestModifier(body: .async(modify))
    }

    var isSynchronous: Bool {
        if case .sync = body { return true }
        return false
    }

    func modifySync(_ request: DownloadRequest) -> DownloadRequest? {
        switch body {
        case .sync(let modify): modify(request)
        case .async: request
        }
    }

    func modify(_ request: DownloadRequest) async -> DownloadRequest? {
        switch body {
        case .sync(let modify): modify(request)
        case .async(let modify): await modify(request)
        }
    }
}
