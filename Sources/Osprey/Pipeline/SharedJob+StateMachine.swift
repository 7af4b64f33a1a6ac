extension SharedJob {
    /// The states of a ``SharedJob`` and the transitions between them, without locks or side
    /// effects: the job runs each transition under its lock and performs the returned action after
    /// releasing it, so no completion, step or registry call ever runs under the lock.
    ///
    /// ```
    /// running(subscribers, step) ──finish──────────────▶ finished(outcome)
    ///            │
    ///            └──────────last subscriber leaves─────▶ cancelled
    /// ```
    ///
    /// Both ends are final. Exactly-once delivery follows from three facts, each a `case` below:
    /// a completion is handed out only by ``finish(_:)``, only in `running`, which it leaves for
    /// good; a subscriber that leaves is removed before that (``unsubscribe(_:)``) and is never
    /// handed out; a subscriber that comes after the end is not added, and gets the outcome
    /// (``subscribe(progress:completion:)`` returns ``SubscribeAction/finished(_:)``) or is told
    /// to start afresh (``SubscribeAction/cancelled``).
    struct StateMachine: Sendable {
        struct Subscriber: Sendable {
            let id: Int
            let completion: Completion
            let progress: ProgressHandler?
        }

        /// The subscribers of a running job, in the order they came. Usually there is one: it is
        /// kept inline, with no array (a linear search is cheapest for the few others).
        struct Subscribers: Sendable {
            private(set) var first: Subscriber?
            private(set) var others: [Subscriber] = []
            /// The last id handed out; ids are never reused within a job.
            private(set) var lastID: Int

            init(first: Subscriber) {
                self.first = first
                lastID = first.id
            }

            var isEmpty: Bool { first == nil && others.isEmpty }
            var count: Int { (first == nil ? 0 : 1) + others.count }

            mutating func add(progress: ProgressHandler?, completion: @escaping Completion) -> Int {
                lastID += 1
                // A running job has a subscriber (it ends when its last one leaves): the new one
                // joins the others.
                others.append(Subscriber(id: lastID, completion: completion, progress: progress))
                return lastID
            }

            /// Removes subscriber `id`; `false` when it is not here.
            mutating func remove(_ id: Int) -> Bool {
                if first?.id == id {
                    first = nil
                    return true
                }
                guard let index = others.firstIndex(where: { $0.id == id }) else { return false }
                others.remove(at: index)
                return true
            }

            func forEach(_ body: (Subscriber) -> Void) {
                if let first { body(first) }
                for subscriber in others { body(subscriber) }
            }
        }

        enum State: Sendable {
            /// Working for `subscribers`; `step` is what the work waits on (a download, an upstream
            /// subscription), stopped if every subscriber leaves.
            case running(Subscribers, step: PendingStep?)
            /// Done: late subscribers get this outcome.
            case finished(Result<Value, OspreyError>)
            /// Left by its last subscriber before its work finished: takes no subscriber.
            case cancelled
            /// Only inside a transition that edits `running` in place: the subscribers are taken
            /// out first so that appending to them does not copy the array.
            case modifying
        }

        private(set) var state: State
        /// How many steps were recorded (see ``setStep(_:ifStepsSince:)``).
        private(set) var steps: UInt64 = 0

        /// A running job with its first subscriber, id ``SharedJob/firstID``.
        init(progress: ProgressHandler?, completion: @escaping Completion) {
            let first = Subscriber(id: SharedJob.firstID, completion: completion, progress: progress)
            state = .running(Subscribers(first: first), step: nil)
        }

        // MARK: - Subscribe

        enum SubscribeAction {
            /// Added: the completion will be called once, unless it leaves first.
            case waiting(id: Int)
            /// Not added: the job has finished with this outcome; the caller delivers it.
            case finished(Result<Value, OspreyError>)
            /// Not added: every subscriber left and the job is dead; the caller starts new work.
            case cancelled
        }

        mutating func subscribe(progress: ProgressHandler?, completion: @escaping Completion) -> SubscribeAction {
            switch state {
            case .running(var subscribers, let step):
                state = .modifying
                let id = subscribers.add(progress: progress, completion: completion)
                state = .running(subscribers, step: step)
                return .waiting(id: id)
            case .finished(let outcome):
                return .finished(outcome)
            case .cancelled:
                return .cancelled
            case .modifying:
                preconditionFailure("SharedJob: subscribe during a transition")
            }
        }

        // MARK: - Unsubscribe

        enum UnsubscribeAction {
            case none
            /// The last subscriber left: stop the step (if any) and forget the job.
            case cancelWork(PendingStep?)
        }

        mutating func unsubscribe(_ id: Int) -> UnsubscribeAction {
            switch state {
            case .running(var subscribers, let step):
                state = .modifying
                guard subscribers.remove(id) else {
                    state = .running(subscribers, step: step)
                    return .none
                }
                guard subscribers.isEmpty else {
                    state = .running(subscribers, step: step)
                    return .none
                }
                state = .cancelled
                return .cancelWork(step)
            case .finished, .cancelled:
                // Already delivered, or already left: nothing to stop.
                return .none
            case .modifying:
                preconditionFailure("SharedJob: unsubscribe during a transition")
            }
        }

        // MARK: - Step

        enum SetStepAction {
            case none
            /// The job was cancelled before this step began: stop it at once.
            case cancel(PendingStep)
        }

        /// Records the step the work now waits on (it replaces the previous one, which is done).
        mutating func setStep(_ step: PendingStep) -> SetStepAction {
            setStep(step, ifStepsSince: steps)
        }

        /// Records `step` unless another step was recorded since `count`: a Swift task's body
        /// may record its next step (a download) before the task itself is recorded, and the
        /// task, done, must not replace it (the job would then stop the wrong step).
        mutating func setStep(_ step: PendingStep, ifStepsSince count: UInt64) -> SetStepAction {
            switch state {
            case .running(let subscribers, _):
                guard steps == count else { return .none }
                steps += 1
                state = .running(subscribers, step: step)
                return .none
            case .cancelled:
                return .cancel(step)
            case .finished:
                // A step begun after the outcome (a background write) is not the job's to stop.
                return .none
            case .modifying:
                preconditionFailure("SharedJob: setStep during a transition")
            }
        }

        // MARK: - Finish

        enum FinishAction {
            case none
            /// Forget the job, then call each of these completions with the outcome, in order.
            case deliver(Subscribers, Result<Value, OspreyError>)
        }

        mutating func finish(_ outcome: Result<Value, OspreyError>) -> FinishAction {
            switch state {
            case .running(let subscribers, _):
                state = .finished(outcome)
                return .deliver(subscribers, outcome)
            case .finished, .cancelled:
                // A second outcome, or one nobody waits for any more: dropped.
                return .none
            case .modifying:
                preconditionFailure("SharedJob: finish during a transition")
            }
        }

        // MARK: - Queries

        /// The subscribers to tell about progress (none once the job has ended).
        var progressReceivers: Subscribers? {
            if case .running(let subscribers, _) = state { return subscribers }
            return nil
        }

        var subscriberCount: Int { progressReceivers?.count ?? 0 }
    }
}
