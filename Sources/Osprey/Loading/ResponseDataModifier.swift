import Foundation

/// Transforms downloaded data before it reaches one caller (SDWebImage's download decryptor).
/// Returning `nil` fails that caller with ``OspreyError/DownloadReason/dataModifyingFailed(url:)``.
/// It runs per caller, on the caller's callback queue context, so coalesced callers may transform
/// the shared data differently. It is not applied to a `304 Not Modified` result.
package struct ResponseDataModifier: Sendable {
    let modify: @Sendable (Data, DownloadResponse) -> Data?

    /// Creates a modifier from a closure that receives the body and the response metadata.
    package init(_ modify: @escaping @Sendable (Data, DownloadResponse) -> Data?) {
        self.modify = modify
    }
}
