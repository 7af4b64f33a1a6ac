extension SharedJob {
    /// The states of a ``SharedJob`` and the transitions between them, without locks or side
    /// effects: the job runs each transition under its lock and performs the returned action after
    /// releasing it, so no completion, step or registry call ever runs under the lock.
    ///
    /// ```
    /// running(subscribers) ──finish──────────────▶ finished
    ///            │
    ///            └──────────last subscriber leaves─────▶ cancelled
    /// ```
    ///
    /// Both ends are final. Exactly-once delivery follows from three facts, each a `case` below:
    /// a completion is handed out only by ``finish(_:)``, only in `running`, which it leaves for
    /// good; a subscriber that leaves is removed before that (``unsubscribe(_:)``) and is never
    /// handed out; a subscriber that comes after the end is not added, and is told so
    /// (``SubscribeAction/ended``). The outcome itself is not state: ``finish()`` hands out the
    /// subscribers, and the job calls them with it (a registry that keeps finished outcomes keeps
    /// them itself, ``JobRegistry/keepsFinished``).
    ///
    /// Priority: each subscriber has one, and a running job's ``priority`` is the highest of its
    /// subscribers'. Joining, leaving and ``setPriority(_:of:)`` recompute it; the work learns of a
    /// change through the observer it registered (``observePriority(_:)``), handed out by
    /// ``takePriorityNotice()`` after the transition, outside the lock.
    struct StateMachine: Sendable {
        struct Subscriber: Sendable {
            let id: Int
            let completion: Completion
            let progress: ProgressHandler?
            var priority: DownloadPriority = .normal
            /// Who subscribed, when the table's user needs to find its subscribers again (the
            /// downloader's ``DownloadTask``s, for cancelling by URL); `nil` in the pipeline.
            var owner: (any AnyObject & Sendable)? = nil
        }

        /// The subscribers of a running job, in the order they came. Usually there is one: it is
        /// kept inline, with no array (a linear search is cheapest for the few others).
        struct Subscribers: Sendable {
            /// The oldest subscriber, while `hasFirst`. A plain field with a flag, not an optional:
            /// the compiler copied a set whose first subscriber was optional, whole, into every new
            /// job's state, retaining and releasing each of its closures once more (perf probes on
            /// swift_retain/release, scenario 2).
            private var first: Subscriber
            /// `false` only once the last subscriber has left (the job is then abandoned and its
            /// set dropped, so the departed `first` is not kept for long).
            private var hasFirst = true
            private var others: [Subscriber] = []
            /// The last id handed out; ids are never reused within a job.
            private(set) var lastID: Int
            /// The highest priority of the subscribers.
            private(set) var priority: DownloadPriority

            /// `consuming`: the subscriber moves in (no copy of its closures to retain and release).
            init(first: consuming Subscriber) {
                lastID = first.id
                priority = first.priority
                self.first = first
            }

            var isEmpty: Bool { !hasFirst }
            /// Whether one of them has a progress handler (usually one subscriber to look at).
            var hasProgress: Bool { hasFirst && (first.progress != nil || others.contains { $0.progress != nil }) }
            var count: Int { hasFirst ? 1 + others.count : 0 }

            mutating func add(_ subscriber: (Int) -> Subscriber) -> Int {
                lastID += 1
                let added = subscriber(lastID)
                priority = max(priority, added.priority)
                // A running job has a subscriber (it ends when its last one leaves), so the new one
                // joins the others; `first` is refilled only as a safeguard.
                if hasFirst {
                    others.append(added)
                } else {
                    first = added
                    hasFirst = true
                }
                return lastID
            }

            /// Removes subscriber `id`; `false` when it is not here. The next oldest becomes
            /// `first` when the first one leaves.
            mutating func remove(_ id: Int) -> Bool {
                guard hasFirst else { return false }
                if first.id == id {
                    if others.isEmpty { hasFirst = false } else { first = others.removeFirst() }
                } else if let index = others.firstIndex(where: { $0.id == id }) {
                    others.remove(at: index)
                } else {
                    return false
                }
                recomputePriority()
                return true
            }

            /// Sets subscriber `id`'s priority; `false` when it is not here.
            mutating func setPriority(_ priority: DownloadPriority, of id: Int) -> Bool {
                guard hasFirst else { return false }
                if first.id == id {
                    first.priority = priority
                } else if let index = others.firstIndex(where: { $0.id == id }) {
                    others[index].priority = priority
                } else {
                    return false
                }
                recomputePriority()
                return true
            }

            private mutating func recomputePriority() {
                // An empty set keeps its last priority: the job is about to end.
                guard hasFirst else { return }
                priority = others.reduce(first.priority) { max($0, $1.priority) }
            }

            func forEach(_ body: (Subscriber) -> Void) {
                guard hasFirst else { return }
                body(first)
                for subscriber in others { body(subscriber) }
            }
        }

        enum State: Sendable {
            /// Working for `subscribers` (``step`` is what the work waits on).
            case running(Subscribers)
            /// Done: its subscribers were handed out to be called with the outcome.
            case finished
            /// Left by its last subscriber before its work finished: takes no subscriber.
            case cancelled
            /// Only inside a transition that edits `running` in place: the subscribers are taken
            /// out first so that appending to them does not copy the array.
            case modifying
        }

        private(set) var state: State
        /// What a running job's work waits on (a download, an upstream subscription), stopped if
        /// every subscriber leaves. Kept beside `state`, not in its payload: recording a step
        /// then copies no subscribers.
        private(set) var step: PendingStep?
        /// How many steps were recorded (see ``setStep(_:ifStepsSince:)``).
        private(set) var steps: UInt64 = 0
        /// The highest priority of the live subscribers (the last one while running; kept after
        /// the end).
        private(set) var priority: DownloadPriority
        /// The work's priority observer (``observePriority(_:)``) and the priority it was last
        /// told (or started at).
        private var priorityObserver: PriorityObserver?
        private var toldPriority: DownloadPriority

        /// A running job with its first subscriber, id ``SharedJob/firstID``, at `priority`.
        init(
            progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority = .normal,
            owner: (any AnyObject & Sendable)? = nil
        ) {
            // Built in place: a named subscriber would be copied into the state, then destroyed.
            state = .running(
                Subscribers(
                    first: Subscriber(
                        id: SharedJob.firstID, completion: completion, progress: progress, priority: priority, owner: owner)))
            self.priority = priority
            toldPriority = priority
        }

        // MARK: - Subscribe

        enum SubscribeAction {
            /// Added: the completion will be called once, unless it leaves first.
            case waiting(id: Int)
            /// Not added: the job has finished, or every subscriber left and it is dead; the
            /// caller starts new work (or takes the outcome its registry kept).
            case ended
        }

        mutating func subscribe(
            progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority = .normal,
            owner: (any AnyObject & Sendable)? = nil
        ) -> SubscribeAction {
            switch state {
            case .running(var subscribers):
                state = .modifying
                let id = subscribers.add { id in
                    Subscriber(id: id, completion: completion, progress: progress, priority: priority, owner: owner)
                }
                self.priority = subscribers.priority
                state = .running(subscribers)
                return .waiting(id: id)
            case .finished, .cancelled:
                return .ended
            case .modifying:
                preconditionFailure("SharedJob: subscribe during a transition")
            }
        }

        // MARK: - Unsubscribe

        enum UnsubscribeAction {
            /// Subscriber `id` was not waiting (it left before, or the job has ended).
            case none
            /// Subscriber `id` left; others still wait.
            case left
            /// The last subscriber left: stop the step (if any) and forget the job.
            case cancelWork(PendingStep?)
        }

        mutating func unsubscribe(_ id: Int) -> UnsubscribeAction {
            switch state {
            case .running(var subscribers):
                state = .modifying
                guard subscribers.remove(id) else {
                    state = .running(subscribers)
                    return .none
                }
                guard subscribers.isEmpty else {
                    priority = subscribers.priority
                    state = .running(subscribers)
                    return .left
                }
                state = .cancelled
                priorityObserver = nil
                defer { step = nil }
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
            case .running:
                guard steps == count else { return .none }
                steps += 1
                self.step = step
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
            /// Call each of these completions with the outcome, in order.
            case deliver(Subscribers)
        }

        /// Ends a running job: its subscribers are handed out, to be called with the outcome.
        mutating func finish() -> FinishAction {
            switch state {
            case .running:
                // Swapped out, so the subscribers move to the action rather than being copied.
                var ended = State.finished
                swap(&ended, &state)
                step = nil
                priorityObserver = nil
                guard case .running(let subscribers) = consume ended else { preconditionFailure("SharedJob: finish left running") }
                return .deliver(subscribers)
            case .finished, .cancelled:
                // A second outcome, or one nobody waits for any more: dropped.
                return .none
            case .modifying:
                preconditionFailure("SharedJob: finish during a transition")
            }
        }

        // MARK: - Priority

        /// Sets subscriber `id`'s priority (nothing when it is not waiting).
        mutating func setPriority(_ priority: DownloadPriority, of id: Int) {
            guard case .running(var subscribers) = state else { return }
            state = .modifying
            if subscribers.setPriority(priority, of: id) { self.priority = subscribers.priority }
            state = .running(subscribers)
        }

        /// Registers the work's priority observer (replacing any); it hears of changes from now on.
        mutating func observePriority(_ observer: @escaping PriorityObserver) {
            guard case .running = state else { return }
            priorityObserver = observer
            toldPriority = priority
        }

        /// The observer to tell and the priority to tell it, when the priority changed since it
        /// was last told; to be called after a transition, and the observer called outside the lock.
        mutating func takePriorityNotice() -> (PriorityObserver, DownloadPriority)? {
            guard let priorityObserver, priority != toldPriority else { return nil }
            toldPriority = priority
            return (priorityObserver, priority)
        }

        // MARK: - Queries

        /// The waiting subscribers (none once the job has ended).
        var waiting: Subscribers? {
            if case .running(let subscribers) = state { return subscribers }
            return nil
        }

        /// The subscribers to tell about progress: none once the job has ended, or while none of
        /// them has a progress handler (so a download's chunks copy no subscribers then).
        var progressReceivers: Subscribers? {
            if case .running(let subscribers) = state, subscribers.hasProgress { return subscribers }
            return nil
        }

        var subscriberCount: Int { waiting?.count ?? 0 }
    }
}
