import Foundation

/// Where a caller's completion and progress handlers run.
public enum CallbackQueue: Sendable {
    /// On whatever thread the downloader finishes the work on (do not block it).
    case immediate
    /// Asynchronously on this dispatch queue. A serial queue keeps a caller's progress reports in
    /// order and before its completion; a concurrent one does not.
    case dispatch(DispatchQueue)

    /// The default: a serial queue shared by all downloaders (`osprey.downloader.callbacks`).
    /// Handlers run one at a time on it, so they should be quick.
    public static let `default` = CallbackQueue.dispatch(DispatchQueue(label: "osprey.downloader.callbacks", qos: .userInitiated))

    func execute(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .immediate: work()
        case .dispatch(let queue): queue.async(execute: work)
        }
    }
}
