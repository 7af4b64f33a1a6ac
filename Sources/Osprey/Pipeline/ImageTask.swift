import Synchronization

/// A running request of the completion-handler API; cancel it to stop waiting. Work shared with
/// other requests continues for them.
public final class ImageTask: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var cancelled = false
        var completed: Bool
    }

    private let state: Locked<State>

    init(completed: Bool) {
        state = Locked(State(completed: completed))
    }

    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    func markCompleted() {
        state.withLock { $0.completed = true }
    }

    /// Cancels the request: its completion gets ``OspreyError/PipelineReason/cancelled(source:)``
    /// unless it already completed.
    public func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard !state.cancelled else { return nil }
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether the request has delivered its (first) result or error.
    public var isCompleted: Bool { state.withLock { $0.completed } }
}
