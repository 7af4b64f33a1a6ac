import Synchronization

/// A running request of the completion-handler API; cancel it to stop waiting. Work shared with
/// other requests continues for them.
public final class ImageTask: Sendable {
    private struct State {
        /// The request's current step (a disk lookup, a subscription to shared work).
        var step: PendingStep?
        /// The request, until it completes: cancelling delivers its cancellation.
        var request: PipelineRequest?
        var cancelled = false
        var completed: Bool
    }

    /// Inline: one allocation per request.
    private let state: Mutex<State>

    init(completed: Bool) {
        state = Mutex(State(completed: completed))
    }

    /// Binds the request that cancelling answers. Returns `false` when the task was already
    /// cancelled (the request should deliver its cancellation and do nothing else).
    func attach(_ request: PipelineRequest) -> Bool {
        state.withLock { state in
            if !state.cancelled && !state.completed { state.request = request }
            return !state.cancelled
        }
    }

    /// Records the step the request waits on, to stop it on cancellation (at once if the task
    /// was already cancelled).
    func setStep(_ step: PendingStep) {
        let cancelNow = state.withLock { state in
            if !state.cancelled && !state.completed { state.step = step }
            return state.cancelled
        }
        if cancelNow { step.cancel() }
    }

    /// Marks the request completed. Returns `false` when it already was (its result is dropped).
    func markCompleted() -> Bool {
        state.withLock { state in
            guard !state.completed else { return false }
            state.completed = true
            state.step = nil
            state.request = nil
            return true
        }
    }

    /// Cancels the request: its completion gets ``OspreyError/PipelineReason/cancelled(source:)``
    /// unless it already completed.
    public func cancel() {
        let (step, request) = state.withLock { state -> (PendingStep?, PipelineRequest?) in
            guard !state.cancelled else { return (nil, nil) }
            state.cancelled = true
            defer { (state.step, state.request) = (nil, nil) }
            return (state.step, state.request)
        }
        step?.cancel()
        request?.deliverCancellation()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether the request has delivered its (first) result or error.
    public var isCompleted: Bool { state.withLock { $0.completed } }
}
