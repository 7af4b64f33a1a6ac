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
        guard case .dispatch(let queue) = self else { return handler(value) }
        Self.dispatch(value, to: handler, on: queue)
    }

    /// Out of line: inlined into `deliver`, the closure's context was allocated on every call,
    /// `.immediate` ones included.
    @inline(never)
    private static func dispatch<Value: Sendable>(_ value: Value, to handler: @escaping @Sendable (Value) -> Void, on queue: DispatchQueue) {
        queue.async { handler(value) }
    }

    func execute(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .immediate: work()
        case .dispatch(let queue): queue.async(execute: work)
        }
    }
}
