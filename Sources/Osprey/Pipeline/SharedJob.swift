/// One unit of pipeline work (a fetch, a decode, a processing stage, a delivery) shared by every
/// request that asks for the same key, as Nuke's task graph shares work between requests.
///
/// The job is driven by callbacks, not by a Swift task of its own: its work is started with its
/// first subscriber (``JobRegistry/subscribe(_:progress:completion:work:)``), moves on from
/// completion handlers (a download, a dispatch queue, an upstream job), and ends with
/// ``finish(_:)``, which calls every subscriber's completion once. A subscriber that leaves
/// (``unsubscribe(_:)``) gets no call; when the last one leaves before the work is done, the job
/// ends unfinished and stops the step its work waits on (``setStep(_:)``), so a later request
/// starts afresh. The states and transitions are ``StateMachine``, where exactly-once delivery
/// is argued; this class only runs them under its lock and acts on their answers outside it.
///
/// Each subscriber has a priority; the job's ``priority`` is the highest of its live
/// subscribers', recomputed as they join, leave or change theirs (``setPriority(_:of:)``), and
/// the work hears of each change through ``observePriority(_:)`` (the downloader moves a queued
/// network task). A subscriber may also name its ``StateMachine/Subscriber/owner``, which the
/// table's user can find again among the ``waiting`` subscribers.
/// A request that misses costs no Swift task in the pipeline: with a task per stage,
/// tasks, continuations and thread hand-offs were most of a miss on a 2-core machine.
///
/// The state sits in a plain stored property behind a lock of its own, not in a
/// `Locked<StateMachine>`, and its type's layout does not depend on `Value` (the outcome is
/// handed on, never kept: see ``finish(_:)``): a generic class's deinit runs unspecialised, and
/// it looked up the runtime metadata of `Locked<StateMachine>`, `Mutex`, its cell and the state
/// on every job freed (perf, scenario 2: 2% of a concurrent miss). One lookup is left, the state
/// machine's own: the compiler destroys a value this large through its value witness.
///
/// `@unchecked Sendable`: `machine`, the one mutable field, is read and written only in
/// ``withMachine(_:)``, under `lock`.
final class SharedJob<Key: Hashable & Sendable, Value: Sendable>: Unsubscribing, @unchecked Sendable {
    /// Receives the job's outcome, once.
    typealias Completion = @Sendable (Result<Value, OspreyError>) -> Void
    /// Receives (bytes received, bytes expected) while a download runs.
    typealias ProgressHandler = JobProgressHandler
    /// Told the job's new priority when it changes.
    typealias PriorityObserver = @Sendable (DownloadPriority) -> Void

    private let lock = Locked<Void>(())
    /// Guarded by `lock` (``withMachine(_:)``), so exclusive without the runtime's check.
    @exclusivity(unchecked) private var machine: StateMachine
    /// The registry holding the job under `key`, told when the job finishes or is abandoned
    /// (it forgets the job then). Held directly, not through a closure or a protocol value, so
    /// that code specialised for the job's types forgets it with specialised code too.
    private let registry: JobRegistry<Key, Value>
    /// The key the job is registered under.
    let key: Key

    /// A job with its first subscriber, id ``firstID`` (no lock taken to add it).
    init(
        registry: JobRegistry<Key, Value>, key: Key, progress: ProgressHandler?, completion: @escaping Completion,
        priority: DownloadPriority = .normal, owner: (any AnyObject & Sendable)? = nil
    ) {
        self.registry = registry
        self.key = key
        machine = StateMachine(progress: progress, completion: completion, priority: priority, owner: owner)
    }

    /// Runs `body` on the state machine under the job's lock.
    @inline(__always)
    private func withMachine<Answer>(_ body: (inout StateMachine) -> Answer) -> Answer {
        lock.withLock { _ in body(&machine) }
    }

    /// The id of the subscriber a job is made with.
    static var firstID: Int { 1 }

    /// Adds a subscriber, unless the job has ended (then nothing is called: the caller acts on
    /// the answer, see ``StateMachine/SubscribeAction``).
    func subscribe(
        progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority = .normal,
        owner: (any AnyObject & Sendable)? = nil
    ) -> StateMachine.SubscribeAction {
        let (action, notice) = join(progress: progress, completion: completion, priority: priority, owner: owner)
        notice?()
        return action
    }

    /// ``subscribe(progress:completion:priority:owner:)`` that hands back the priority change to
    /// tell, for a caller holding a lock of its own (the registry's) to tell it after releasing it.
    func join(
        progress: ProgressHandler?, completion: @escaping Completion, priority: DownloadPriority,
        owner: (any AnyObject & Sendable)?
    ) -> (StateMachine.SubscribeAction, notice: (@Sendable () -> Void)?) {
        let (action, notice) = withMachine { machine in
            (machine.subscribe(progress: progress, completion: completion, priority: priority, owner: owner), machine.takePriorityNotice())
        }
        guard let (observer, priority) = notice else { return (action, nil) }
        return (action, { observer(priority) })
    }

    /// Removes subscriber `id`; its completion will not be called. The last subscriber leaving
    /// cancels the work. Does nothing once the job has ended.
    func unsubscribe(_ id: Int) {
        leave(id)
    }

    /// ``unsubscribe(_:)``, saying whether subscriber `id` was waiting (`false`: its completion
    /// has been or is being called, or it left before).
    @discardableResult
    func leave(_ id: Int) -> Bool {
        let (action, notice) = withMachine { machine in (machine.unsubscribe(id), machine.takePriorityNotice()) }
        switch action {
        case .none:
            return false
        case .left:
            notice.map { observer, priority in observer(priority) }
            return true
        case .cancelWork(let step):
            step?.cancel()
            registry.forget(key, self)
            return true
        }
    }

    /// The highest priority of the subscribers waiting (the last one, once the job has ended).
    var priority: DownloadPriority { withMachine { $0.priority } }

    /// Sets subscriber `id`'s priority, telling the work's observer if the job's changes.
    func setPriority(_ priority: DownloadPriority, of id: Int) {
        let notice = withMachine { machine in
            machine.setPriority(priority, of: id)
            return machine.takePriorityNotice()
        }
        notice.map { observer, priority in observer(priority) }
    }

    /// Calls `observer` with the job's new priority whenever it changes from now on, until the
    /// job ends (outside the job's lock; two changes close together may be told out of order, so
    /// an observer that keeps state reads ``priority`` again under its own lock).
    /// - Returns: the priority now, from which the changes are told.
    @discardableResult
    func observePriority(_ observer: @escaping PriorityObserver) -> DownloadPriority {
        withMachine { machine in
            machine.observePriority(observer)
            return machine.priority
        }
    }

    /// The waiting subscribers (none once the job has ended), to call outside the lock.
    var waiting: StateMachine.Subscribers? { withMachine { $0.waiting } }

    /// Records the step the work waits on, to stop it when the job is abandoned (at once if it
    /// already was).
    func setStep(_ step: PendingStep) {
        switch withMachine({ $0.setStep(step) }) {
        case .none: return
        case .cancel(let step): step.cancel()
        }
    }

    /// How many steps were recorded so far (for ``setStep(_:ifStepsSince:)``).
    var steps: UInt64 { withMachine { $0.steps } }

    /// Records `step` unless a newer step was recorded since `count`.
    func setStep(_ step: PendingStep, ifStepsSince count: UInt64) {
        switch withMachine({ $0.setStep(step, ifStepsSince: count) }) {
        case .none: return
        case .cancel(let step): step.cancel()
        }
    }

    /// Ends the job with `outcome` and calls every subscriber's completion (outside the lock).
    /// Does nothing when the job was abandoned or has finished.
    ///
    /// The registry drops the job first (keeping its outcome, if it keeps finished ones): nobody
    /// can join the job after that, so the job keeps no outcome for late subscribers, and no
    /// finished job holds its registry. Every subscriber that joined before is delivered.
    func finish(_ outcome: Result<Value, OspreyError>) {
        finish(outcome, sharedAs: nil)
    }

    /// ``finish(_:)``, calling `share` once on a value that goes to more than one subscriber and
    /// handing them its answer: for a value whose subscribers may share more work (a fetched
    /// source's decodes, ``FetchedSource/sharedByRequests()``), which a value with one subscriber
    /// need not set up. Used on a registry that keeps no outcomes (one kept would be unshared).
    func finish(_ outcome: Result<Value, OspreyError>, sharedAs share: ((Value) -> Value)?) {
        registry.ended(key, self, with: outcome)
        switch withMachine({ $0.finish() }) {
        case .none:
            return
        case .deliver(let subscribers):
            // The registry dropped the job above: no subscriber joins after `finish()`, so the count is final.
            if let share, subscribers.count > 1, case .success(let value) = outcome {
                let shared = Result<Value, OspreyError>.success(share(value))
                return subscribers.forEach { $0.completion(shared) }
            }
            subscribers.forEach { $0.completion(outcome) }
        }
    }

    /// Tells every subscriber's progress handler how far the work has come.
    func reportProgress(received: Int, expected: Int?) {
        progressReceivers?.forEach { $0.progress?(received, expected) }
    }

    /// The waiting subscribers when one of them has a progress handler (else `nil`), to call
    /// outside the lock.
    var progressReceivers: StateMachine.Subscribers? { withMachine { $0.progressReceivers } }
}

/// Receives (bytes received, bytes expected) while a download runs.
typealias JobProgressHandler = @Sendable (_ received: Int, _ expected: Int?) -> Void
