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

    /// Calls `handler` with `value` here. (Unlike ``execute(_:)`` with a closure wrapping the call,
    /// `.immediate` allocates nothing: this is on every request's completion.)
    func deliver<Value: Sendable>(_ value: Value, to handler: @escaping @Sendable (Value) -> Void) {
        switch self {
        case .immediate: handler(value)
        case .dispatch(let queue): queue.async { handler(value) }
        }
    }

    func execute(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .immediate: work()
        case .dispatch(let queue): queue.async(execute: work)
        }
    }
}
