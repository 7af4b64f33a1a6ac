import Synchronization

/// One unit of pipeline work (a fetch, a decode, a processing stage) shared by every caller that
/// asks for the same key, as Nuke's task graph shares work between requests.
///
/// The work runs in its own Swift task. Each subscriber awaits ``value()``; a subscriber whose
/// task is cancelled leaves alone (it gets `CancellationError`), and when the last subscriber
/// leaves before the work is done the work is cancelled and the job is abandoned, so a later
/// request starts afresh.
final class SharedJob<Value: Sendable>: Sendable {
    private struct State {
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
        /// Subscribers that have an id but have not left or been answered.
        var subscribers = 0
        var nextID = 0
        /// Ids cancelled before their continuation was registered.
        var cancelledEarly: Set<Int> = []
        var outcome: Result<Value, any Error>?
        var task: Task<Void, Never>?
        var abandoned = false
        var progressObservers: [Int: ProgressHandler] = [:]
    }

    /// Receives (bytes received, bytes expected) while a download runs.
    typealias ProgressHandler = @Sendable (_ received: Int, _ expected: Int?) -> Void

    private let state = Locked(State())
    /// Called once when the job finishes or is abandoned (the registry forgets it then).
    private let onEnd: @Sendable () -> Void

    init(onEnd: @escaping @Sendable () -> Void) {
        self.onEnd = onEnd
    }

    /// Starts `work`; called once, right after the job is registered. `work` gets the job, to
    /// report progress to its subscribers.
    func start(_ work: @escaping @Sendable (SharedJob<Value>) async throws -> Value) {
        let task = Task.detached { [self] in
            let outcome: Result<Value, any Error>
            do { outcome = .success(try await work(self)) } catch { outcome = .failure(error) }
            self.finish(outcome)
        }
        let abandonedAlready = state.withLock { state in
            state.task = task
            return state.abandoned
        }
        if abandonedAlready { task.cancel() }
    }

    /// How many subscribers wait for the job (for tests).
    var subscriberCount: Int { state.withLock { $0.subscribers } }

    /// Whether the job can still take subscribers.
    var isJoinable: Bool { state.withLock { !$0.abandoned } }

    /// Tells every subscriber's progress handler how far the work has come.
    func reportProgress(received: Int, expected: Int?) {
        let observers = state.withLock { Array($0.progressObservers.values) }
        for observer in observers { observer(received, expected) }
    }

    /// Subscribes and waits for the job's value. Cancelling the calling task unsubscribes.
    func value(progress: ProgressHandler? = nil) async throws -> Value {
        let id = state.withLock { state in
            state.subscribers += 1
            state.nextID += 1
            if let progress { state.progressObservers[state.nextID] = progress }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate: Result<Value, any Error>? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            self.leave(id)
        }
    }

    private func leave(_ id: Int) {
        let (continuation, taskToCancel): (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) = state.withLock { state in
            guard state.outcome == nil, !state.abandoned else { return (nil, nil) }
            state.progressObservers.removeValue(forKey: id)
            let continuation = state.waiters.removeValue(forKey: id)
            if continuation == nil { state.cancelledEarly.insert(id) }
            state.subscribers -= 1
            guard state.subscribers == 0 else { return (continuation, nil) }
            state.abandoned = true
            return (continuation, state.task)
        }
        continuation?.resume(throwing: CancellationError())
        if let taskToCancel {
            taskToCancel.cancel()
            onEnd()
        }
    }

    private func finish(_ outcome: Result<Value, any Error>) {
        let (waiters, wasAbandoned) = state.withLock { state in
            let waiters = state.waiters
            state.waiters = [:]
            state.progressObservers = [:]
            if state.abandoned { return (waiters, true) }
            state.outcome = outcome
            state.abandoned = true
            return (waiters, false)
        }
        if !wasAbandoned { onEnd() }
        for continuation in waiters.values { continuation.resume(with: outcome) }
    }
}

/// The jobs in flight, by key. A finished or abandoned job is forgotten, so the next request for
/// its key starts new work (which usually finds the result in a cache).
final class JobRegistry<Value: Sendable>: Sendable {
    private let jobs = Locked<[String: SharedJob<Value>]>([:])

    /// The job in flight for `key`, or a new one running `work`.
    func job(for key: String, work: @escaping @Sendable (SharedJob<Value>) async throws -> Value) -> SharedJob<Value> {
        let (job, isNew) = jobs.withLock { jobs -> (SharedJob<Value>, Bool) in
            if let existing = jobs[key], existing.isJoinable { return (existing, false) }
            // Strong: the registry holds a job only until it ends, when this runs and drops it.
            // (A weak reference would give the registry a side table and slow every retain of it.)
            let job = SharedJob<Value>(onEnd: { self.forget(key) })
            jobs[key] = job
            return (job, true)
        }
        if isNew { job.start(work) }
        return job
    }

    /// How many jobs are in flight (for tests).
    var count: Int { jobs.withLock { $0.count } }

    /// The subscribers of the job in flight whose key ends with `suffix`, or 0 (for tests).
    func subscribers(ofKeyEndingWith suffix: String) -> Int {
        let job = jobs.withLock { jobs in jobs.first { $0.key.hasSuffix(suffix) }?.value }
        return job?.subscriberCount ?? 0
    }

    private func forget(_ key: String) {
        jobs.withLock { jobs in
            if let job = jobs[key], !job.isJoinable { jobs.removeValue(forKey: key) }
        }
    }
}
