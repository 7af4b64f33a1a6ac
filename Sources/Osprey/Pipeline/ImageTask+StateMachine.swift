extension ImageTask {
    /// The states of a request's ``ImageTask`` and the transitions between them, without locks or
    /// side effects: the task runs each under its lock and acts on the answer after releasing it.
    ///
    /// ```
    /// running(request, step) ──markCompleted──▶ completed ──cancel──▶ cancelled(delivered: true)
    ///            │                                                             ▲
    ///            └──cancel──▶ cancelled(delivered: false) ──markCompleted──────┘
    /// ```
    ///
    /// **Exactly once.** ``PipelineRequest`` calls its completion only after ``markCompleted()``
    /// returned `true`, and this machine returns `true` once: only when it leaves `running` or
    /// `cancelled(delivered: false)`, neither of which it can enter again. So the unsafe
    /// continuation of ``ImagePipeline/image(for:options:)`` is resumed at most once. It is
    /// resumed at least once because every path of a request ends in `markCompleted`: each try
    /// ends in a cache hit or in its delivery job's completion, which ``SharedJob/StateMachine``
    /// calls once for every subscriber that did not leave; a subscriber leaves only when
    /// ``cancel()`` stops the task's step, and that same transition hands back the request to
    /// deliver its cancellation (a cancel before ``attach(_:)`` makes `attach` answer `false`, and
    /// the request delivers its cancellation itself).
    struct StateMachine: Sendable {
        enum State: Sendable {
            /// Not yet delivered. `request` is bound by ``attach(_:)``; `step` is what the request
            /// waits on (a disk lookup, a subscription to shared work).
            case running(request: PipelineRequest?, step: PendingStep?)
            /// The result went out (not cancelled).
            case completed
            /// ``cancel()`` was called; `delivered` once the result or the cancellation went out.
            case cancelled(delivered: Bool)
        }

        private(set) var state: State
        /// The request's priority: what its steps are subscribed at.
        var priority: DownloadPriority
        /// Whether ``priority`` was set after the request started (its steps must be told).
        var priorityChanged = false

        init(completed: Bool, priority: DownloadPriority) {
            state = completed ? .completed : .running(request: nil, step: nil)
            self.priority = priority
        }

        /// The step the running request waits on.
        var step: PendingStep? {
            if case .running(_, let step) = state { return step }
            return nil
        }

        var isCancelled: Bool {
            if case .cancelled = state { return true }
            return false
        }

        var isCompleted: Bool {
            switch state {
            case .running, .cancelled(delivered: false): false
            case .completed, .cancelled(delivered: true): true
            }
        }

        /// Binds the request that a cancellation answers. `false`: the task was cancelled first,
        /// and the request must deliver its cancellation and do nothing else.
        mutating func attach(_ request: PipelineRequest) -> Bool {
            switch state {
            case .running(_, let step):
                state = .running(request: request, step: step)
                return true
            case .completed:
                return true
            case .cancelled:
                return false
            }
        }

        enum SetStepAction {
            case none
            /// The task was cancelled before the step began: stop it at once.
            case cancel(PendingStep)
        }

        /// Records `step`, which replaces the previous one (done: the request has moved on).
        mutating func setStep(_ step: PendingStep) -> SetStepAction {
            switch state {
            case .running(let request, _):
                state = .running(request: request, step: step)
                return .none
            case .completed:
                return .none
            case .cancelled:
                return .cancel(step)
            }
        }

        /// Whether the caller is the one to deliver the request's result: `true` exactly once.
        mutating func markCompleted() -> Bool {
            switch state {
            case .running:
                state = .completed
                return true
            case .cancelled(delivered: false):
                state = .cancelled(delivered: true)
                return true
            case .completed, .cancelled(delivered: true):
                return false
            }
        }

        enum CancelAction {
            case none
            /// Stop the step (if any) and have the request (if bound) deliver its cancellation.
            case cancel(step: PendingStep?, request: PipelineRequest?)
        }

        mutating func cancel() -> CancelAction {
            switch state {
            case .running(let request, let step):
                state = .cancelled(delivered: false)
                return .cancel(step: step, request: request)
            case .completed:
                state = .cancelled(delivered: true)
                return .none
            case .cancelled:
                return .none
            }
        }
    }
}
