/// One unit of shared work (a download, a fetch, a decode, a processing stage, a delivery) for
/// every request that asks for the same key, as Nuke's task graph shares work between requests.
///
/// The job is driven by callbacks, not by a Swift task of its own: its work is started with its
/// first subscriber (``JobRegistry/subscribe(_:priority:owner:progress:completion:work:)``),
/// moves on from completion handlers (a download, a dispatch queue, an upstream job), and ends
/// with ``finish(_:sharedAs:)``, which calls every subscriber's completion once. A subscriber
/// that leaves (``unsubscribe(_:)``) gets no call; when the last one leaves before the work is
/// done, the job ends unfinished and stops the step its work waits on (``setStep(_:)``),
/// so a later request starts afresh. The states and transitions are ``StateMachine``, where
/// exactly-once delivery is argued; this class only runs them under its registry's lock and
/// acts on their answers outside it.
///
/// Each subscriber has a priority; the job's ``priority`` is the highest of its live
/// subscribers', and the work hears of each change through ``observePriority(_:)`` (the
/// downloader moves a queued network task). A subscriber may also name its
/// ``StateMachine/Subscriber/owner``, which the table's user finds again among ``waiting``.
/// A request that misses costs no Swift task in the pipeline: with a task per stage, tasks,
/// continuations and thread hand-offs were most of a miss on a 2-core machine.
///
/// One lock guards a registry and all its jobs (``JobRegistry/jobs``), as one serial queue guards
/// Nuke's task graph: a transition that ends a job takes it out of the registry in the same step,
/// so a job in the registry is always running and a request never meets an ended one. The state
/// sits in a plain stored property, not in a `Locked<StateMachine>`, and its type's layout does
/// not depend on `Value` (the outcome is handed on, never kept): a generic class's deinit runs
/// unspecialised, and would look up the runtime metadata of `Locked<StateMachine>`, `Mutex`, its
/// cell and the state on every job freed.
///
/// `@unchecked Sendable`: `machine`, the one mutable field, is read and written only under the
/// registry's lock (``withMachine(_:)``, ``changing(_:)`` from the registry's own critical sections).
final class SharedJob<Key: Hashable & Sendable, Value: Sendable>: SubscribedWork, @unchecked Sendable {
    /// Receives the job's outcome, once.
    typealias Completion = @Sendable (Result<Value, OspreyError>) -> Void
    /// Receives (bytes received, bytes expected) while a download runs.
    typealias ProgressHandler = JobProgressHandler
    /// Told the job's new priority when it changes.
    typealias PriorityObserver = @Sendable (DownloadPriority) -> Void
    /// A change of the job's priority, to tell its observer and its step outside the lock.
    typealias PriorityNotice = (observer: PriorityObserver?, step: PendingStep?, priority: DownloadPriority)

    /// Guarded by the registry's lock, so exclusive without the runtime's check.
    @exclusivity(unchecked) private var machine: StateMachine
    /// The registry holding the job under `key` while it runs, whose lock guards the job. Held
    /// directly, not through a closure or a protocol value, so that code specialised for the
    /// job's types leaves it with specialised code too.
    private let registry: JobRegistry<Key, Value>
    /// The key the job is registered under.
    let key: Key

    /// A job with its first subscriber, id ``firstID``, at `priority` (default
    /// ``DownloadPriority/normal``), owned by `owner` (default none).
    init(
        registry: JobRegistry<Key, Value>, key: Key, progress: ProgressHandler?, completion: @escaping Completion,
        priority: DownloadPriority = .normal, owner: (any AnyObject & Sendable)? = nil
    ) {
        self.registry = registry
        self.key = key
        machine = StateMachine(progress: progress, completion: completion, priority: priority, owner: owner)
    }

    /// The id of the subscriber a job is made with.
    static var firstID: Int { 1 }

    /// Runs `body` on the state machine under the registry's lock.
    @inline(__always)
    private func withMachine<Answer>(_ body: (inout StateMachine) -> Answer) -> Answer {
        registry.jobs.withLock { _ in body(&machine) }
    }

    /// Runs a transition that may change the job's priority, with the registry's lock held by
    /// the caller; with the change to tell (``tell(_:)``, outside the lock) the work's observer
    /// and the step it waits on (a subscription upstream, a download), if any: so the highest
    /// priority of the waiting subscribers reaches every stage below.
    @inline(__always)
    func changing<Answer>(_ body: (inout StateMachine) -> Answer) -> (Answer, notice: PriorityNotice?) {
        let before = machine.priority
        let answer = body(&machine)
        guard machine.priority != before, machine.priorityObserver != nil || machine.step != nil else { return (answer, nil) }
        return (answer, (machine.priorityObserver, machine.step, machine.priority))
    }

    /// Tells a priority change to the work's observer and step.
    static func tell(_ notice: PriorityNotice?) {
        guard let notice else { return }
        notice.observer?(notice.priority)
        notice.step?.setPriority(notice.priority)
    }

    /// Removes subscriber `id`; its completion will not be called. The last subscriber leaving
    /// cancels the work.
    /// - Returns: whether `id` was waiting (`false`: its completion has been or is being called,
    ///   or it left before).
    @discardableResult
    func unsubscribe(_ id: Int) -> Bool {
        let (action, notice) = registry.jobs.withLock { jobs in
            let (action, notice) = changing { $0.unsubscribe(id) }
            // Abandoned: out of the registry with its last subscriber, so no request joins it.
            if case .cancelWork = action { jobs.running[key] = nil }
            return (action, notice)
        }
        switch action {
        case .none:
            return false
        case .left:
            Self.tell(notice)
            return true
        case .cancelWork(let step):
            step?.cancel()
            return true
        }
    }

    /// The highest priority of the subscribers waiting (the last one, once the job has ended).
    var priority: DownloadPriority { withMachine { $0.priority } }

    /// Sets subscriber `id`'s priority, telling the work's observer if the job's changes.
    func setPriority(_ priority: DownloadPriority, of id: Int) {
        Self.tell(registry.jobs.withLock { _ in changing { $0.setPriority(priority, of: id) } }.notice)
    }

    /// Calls `observer` with the job's new priority whenever it changes from now on, until the
    /// job ends (outside the lock; two changes close together may be told out of order, so
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
    var waiting: [StateMachine.Subscriber] { withMachine { $0.waiting } }

    /// Records the step the work waits on, to stop it when the job is abandoned (at once if it
    /// already was). `step` is made under the registry's lock: a Swift task made there (a disk
    /// lookup that may start the download) records the steps its body starts after its own,
    /// never before (which would leave the newer step running when the job is abandoned).
    func setStep(_ step: @autoclosure () -> PendingStep) {
        if case .cancel(let step) = withMachine({ $0.setStep(step()) }) { step.cancel() }
    }

    /// ``setStep(_:)`` for a step made at `priority` (a subscription upstream, a download): told
    /// the job's priority when it changed before the step was recorded (later changes reach it
    /// through ``changing(_:)``).
    func setStep(_ step: @autoclosure () -> PendingStep, madeAt priority: DownloadPriority) {
        let (action, behind, now) = withMachine { machine -> (StateMachine.SetStepAction, PendingStep?, DownloadPriority) in
            let action = machine.setStep(step())
            // The step, to tell outside the lock, only when the priority moved since it was made.
            guard case .none = action, machine.priority != priority else { return (action, nil, priority) }
            return (action, machine.step, machine.priority)
        }
        if case .cancel(let step) = action { return step.cancel() }
        behind?.setPriority(now)
    }

    /// Ends the job with `outcome` and calls every subscriber's completion (outside the lock).
    /// Does nothing when the job was abandoned or has finished.
    ///
    /// The registry drops the job in the same step (keeping its outcome, if it keeps finished
    /// ones): nobody can join the job after that, so the job keeps no outcome for late
    /// subscribers, and no finished job holds its registry.
    ///
    /// `share` (default none) is called once on a value that goes to more than one subscriber,
    /// and they get its answer: for a value whose subscribers may share more work (a fetched
    /// source's decodes, ``FetchedSource/sharedByRequests()``), which a value with one subscriber
    /// need not set up. Used on a registry that keeps no outcomes (one kept would be unshared).
    func finish(_ outcome: Result<Value, OspreyError>, sharedAs share: ((Value) -> Value)? = nil) {
        let action = registry.jobs.withLock { jobs in
            let action = machine.finish()
            if case .deliver = action {
                jobs.running[key] = nil
                if registry.keepsFinished { jobs.finished[key] = outcome }
            }
            return action
        }
        guard case .deliver(let subscribers) = action else { return }
        if let share, subscribers.count > 1, case .success(let value) = outcome {
            let shared = Result<Value, OspreyError>.success(share(value))
            return subscribers.forEach { $0.completion(shared) }
        }
        subscribers.forEach { $0.completion(outcome) }
    }

    /// Tells every subscriber's progress handler how far the work has come.
    func reportProgress(received: Int, expected: Int?) {
        progressReceivers?.forEach { $0.progress?(received, expected) }
    }

    /// The waiting subscribers when one of them has a progress handler (else `nil`), to call
    /// outside the lock.
    var progressReceivers: [StateMachine.Subscriber]? { withMachine { $0.progressReceivers } }
}

/// Receives (bytes received, bytes expected) while a download runs.
typealias JobProgressHandler = @Sendable (_ received: Int, _ expected: Int?) -> Void
