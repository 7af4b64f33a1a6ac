import Foundation

/// Decides whether a redirect is followed. The downloader offers each `3xx` response with a
/// `Location` (301, 302, 303, 307, 308) to the handler with the proposed next request (for 303 the
/// method becomes `GET`). Returning a request follows it (possibly changed); returning `nil` refuses
/// the redirect, and the `3xx` response itself becomes the final response, which fails with
/// ``OspreyError/DownloadReason/invalidStatusCode(_:response:)`` unless `3xx` codes were made
/// acceptable. Without a handler, redirects are followed as proposed, up to
/// ``ImageDownloader/Configuration/maximumRedirects`` (default 10).
package struct RedirectHandler: Sendable {
    let handle: @Sendable (DownloadRequest, DownloadResponse) async -> DownloadRequest?

    /// Creates a handler from a closure receiving the proposed request and the redirect response.
    package init(_ handle: @escaping @Sendable (_ proposed: DownloadRequest, _ response: DownloadResponse) async -> DownloadRequest?) {
        self.handle = handle
    }

    /// Follows every redirect as proposed.
    package static let follow = RedirectHandler { proposed, _ in proposed }
    /// Refuses every redirect.
    package static let refuse = RedirectHandler { _, _ in nil }
}
