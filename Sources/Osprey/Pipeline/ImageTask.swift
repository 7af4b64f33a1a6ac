import Synchronization

/// A running request of the completion-handler API; cancel it to stop waiting. Work shared with
/// other requests continues for them.
public final class ImageTask: Sendable {
    private struct State {
        /// Stops the request's current step (a disk lookup, a subscription to shared work).
        var onCancel: (@Sendable () -> Void)?
        var cancelled = false
        var completed: Bool
    }

    /// Inline: one allocation per request.
    private let state: Mutex<State>

    init(completed: Bool) {
        state = Mutex(State(completed: completed))
    }

    /// Sets what cancelling stops now; runs `handler` at once when the request was cancelled.
    func setCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        let cancelNow = state.withLock { state in
            if !state.cancelled { state.onCancel = handler }
            return state.cancelled
        }
        if cancelNow { handler() }
    }

    /// Marks the request completed. Returns `false` when it already was (its result is dropped).
    func markCompleted() -> Bool {
        state.withLock { state in
            guard !state.completed else { return false }
            state.completed = true
            state.onCancel = nil
            return true
        }
    }

    /// Cancels the request: its completion gets ``OspreyError/PipelineReason/cancelled(source:)``
    /// unless it already completed.
    public func cancel() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            defer { state.onCancel = nil }
            return state.onCancel
        }
        handler?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether the request has delivered its (first) result or error.
    public var isCompleted: Bool { state.withLock { $0.completed } }
}
