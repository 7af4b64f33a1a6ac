extension SharedJob {
    /// The states of a ``SharedJob`` and the transitions between them, without locks or side
    /// effects: the job runs each transition under its registry's lock and performs the returned
    /// action after releasing it, so no completion or step ever runs under the lock.
    ///
    /// ```
    /// running(subscribers) ──finish──────────────▶ finished
    ///            │
    ///            └──────────last subscriber leaves─────▶ cancelled
    /// ```
    ///
    /// Both ends are final. Exactly-once delivery follows from three facts: a completion is handed
    /// out only by ``finish()``, only while `running`, which it leaves for good, emptying
    /// ``waiting``; a subscriber that leaves is removed from ``waiting`` before that
    /// (``unsubscribe(_:)``); no subscriber comes after the end, because the transitions that end
    /// a job take it out of its registry (``JobRegistry``). The outcome itself is not state:
    /// ``finish()`` hands out the subscribers, and the job calls them with it (a registry that
    /// keeps finished outcomes keeps them itself, ``JobRegistry/keepsFinished``).
    ///
    /// Priority: each subscriber has one, and a running job's ``priority`` is the highest of its
    /// subscribers'. Joining, leaving and ``setPriority(_:of:)`` recompute it; the job tells the
    /// work's ``priorityObserver`` of a change after the transition, outside the lock.
    struct StateMachine: Sendable {
        struct Subscriber: Sendable {
            let id: Int
            let completion: Completion
            let progress: ProgressHandler?
            var priority: DownloadPriority
            /// Who subscribed, when the table's user needs to find its subscribers again (the
            /// downloader's ``DownloadTask``s, for cancelling by URL); `nil` in the pipeline.
            let owner: (any AnyObject & Sendable)?
        }

        enum State: Sendable {
            /// Working for ``waiting`` (``step`` is what the work waits on).
            case running
            /// Done: its subscribers were handed out to be called with the outcome.
            case finished
            /// Left by its last subscriber before its work finished: takes no subscriber.
            case cancelled
        }

        private(set) var state = State.running
        /// The subscribers of a running job, in the order they came; empty once it has ended.
        private(set) var waiting: [Subscriber]
        /// What a running job's work waits on (a download, an upstream subscription), stopped if
        /// every subscriber leaves.
        private(set) var step: PendingStep?
        /// The last subscriber id handed out; ids are never reused within a job.
        private var lastID = SharedJob.firstID
        /// The highest priority of the waiting subscribers (kept after the end).
        private(set) var priority: DownloadPriority
        /// Told the job's new priority when a transition changes it, until the job ends.
        private(set) var priorityObserver: PriorityObserver?

        /// A running job with its first subscriber, id ``SharedJob/firstID``, at `priority`
        /// (default ``DownloadPriority/normal``), owned by `owner` (default none).
        init(
            progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority = .normal,
            owner: (any AnyObject & Sendable)? = nil
        ) {
            waiting = [Subscriber(id: SharedJob.firstID, completion: completion, progress: progress, priority: priority, owner: owner)]
            self.priority = priority
        }

        // MARK: - Subscribe

        /// Adds a subscriber to a running job (the registry holds only running ones: an ended job
        /// takes none); its completion will be called once, unless it leaves first.
        /// - Returns: its id.
        mutating func subscribe(
            progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority = .normal,
            owner: (any AnyObject & Sendable)? = nil
        ) -> Int {
            assert(state == .running, "a job takes subscribers only while it runs")
            lastID += 1
            waiting.append(Subscriber(id: lastID, completion: completion, progress: progress, priority: priority, owner: owner))
            self.priority = max(self.priority, priority)
            return lastID
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
            // Only a running job has waiting subscribers.
            guard let index = waiting.firstIndex(where: { $0.id == id }) else { return .none }
            waiting.remove(at: index)
            guard waiting.isEmpty else {
                recomputePriority()
                return .left
            }
            state = .cancelled
            priorityObserver = nil
            defer { step = nil }
            return .cancelWork(step)
        }

        // MARK: - Step

        enum SetStepAction {
            case none
            /// The job was cancelled before this step began: stop it at once.
            case cancel(PendingStep)
        }

        /// Records the step the work now waits on (it replaces the previous one, which is done).
        mutating func setStep(_ step: PendingStep) -> SetStepAction {
            switch state {
            case .running:
                self.step = step
                return .none
            case .cancelled:
                return .cancel(step)
            case .finished:
                // A step begun after the outcome (a background write) is not the job's to stop.
                return .none
            }
        }

        // MARK: - Finish

        enum FinishAction {
            case none
            /// Call each of these completions with the outcome, in order.
            case deliver([Subscriber])
        }

        /// Ends a running job: its subscribers are handed out, to be called with the outcome.
        mutating func finish() -> FinishAction {
            // A second outcome, or one nobody waits for any more, is dropped.
            guard case .running = state else { return .none }
            state = .finished
            step = nil
            priorityObserver = nil
            defer { waiting = [] }
            return .deliver(waiting)
        }

        // MARK: - Priority

        /// Sets subscriber `id`'s priority (nothing when it is not waiting).
        mutating func setPriority(_ priority: DownloadPriority, of id: Int) {
            guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
            waiting[index].priority = priority
            recomputePriority()
        }

        private mutating func recomputePriority() {
            priority = waiting.reduce(DownloadPriority.veryLow) { max($0, $1.priority) }
        }

        /// Registers the work's priority observer (replacing any), while the job runs.
        mutating func observePriority(_ observer: @escaping PriorityObserver) {
            if case .running = state { priorityObserver = observer }
        }

        /// The waiting subscribers when one of them has a progress handler (else `nil`, so a
        /// download's chunks copy no subscribers then).
        var progressReceivers: [Subscriber]? {
            waiting.contains { $0.progress != nil } ? waiting : nil
        }
    }
}
