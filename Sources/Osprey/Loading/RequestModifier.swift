import Foundation

/// Edits a request before it is sent (Kingfisher's `ImageDownloadRequestModifier`, synchronous or
/// asynchronous). Returning `nil` cancels the download with
/// ``OspreyError/DownloadReason/emptyRequest(url:)``; nothing is sent.
///
/// Modifiers run before coalescing, for every caller: callers whose modified requests are equal share
/// one network task. A downloader-wide modifier (``ImageDownloader/Configuration/requestModifier``)
/// runs first, then the caller's (``DownloadOptions/requestModifier``).
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

/// Transforms downloaded data before it reaches one caller (SDWebImage's download decryptor).
/// Returning `nil` fails that caller with ``OspreyError/DownloadReason/dataModifyingFailed(url:)``.
/// It runs per caller, on the caller's callback queue context, so coalesced callers may transform
/// the shared data differently. It is not applied to a `304 Not Modified` result.
public struct ResponseDataModifier: Sendable {
    let modify: @Sendable (Data, DownloadResponse) -> Data?

    /// Creates a modifier from a closure that receives the body and the response metadata.
    public init(_ modify: @escaping @Sendable (Data, DownloadResponse) -> Data?) {
        self.modify = modify
    }
}

/// Decides whether a redirect is followed. The downloader offers each `3xx` response with a
/// `Location` (301, 302, 303, 307, 308) to the handler with the proposed next request (for 303 the
/// method becomes `GET`). Returning a request follows it (possibly changed); returning `nil` refuses
/// the redirect, and the `3xx` response itself becomes the final response, which fails with
/// ``OspreyError/DownloadReason/invalidStatusCode(_:response:)`` unless `3xx` codes were made
/// acceptable. Without a handler, redirects are followed as proposed, up to
/// ``ImageDownloader/Configuration/maximumRedirects`` (default 10).
public struct RedirectHandler: Sendable {
    let handle: @Sendable (DownloadRequest, DownloadResponse) async -> DownloadRequest?

    /// Creates a handler from a closure receiving the proposed request and the redirect response.
    public init(_ handle: @escaping @Sendable (_ proposed: DownloadRequest, _ response: DownloadResponse) async -> DownloadRequest?) {
        self.handle = handle
    }

    /// Follows every redirect as proposed.
    public static let follow = RedirectHandler { proposed, _ in proposed }
    /// Refuses every redirect.
    public static let refuse = RedirectHandler { _, _ in nil }
}
