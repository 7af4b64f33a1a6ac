/// The jobs in flight, by key: Osprey's one way to share work. A finished or abandoned job is
/// forgotten, so the next request for its key starts new work (which usually finds the result in
/// a cache). The pipeline's stages subscribe with callbacks
/// (``subscribe(_:priority:owner:progress:completion:work:)``); the data stage and the server await
/// a job's value (``value(for:priority:work:)``).
///
/// One lock, ``jobs``, guards the tables and the state of every job in them: a job's transitions
/// that end it take it out of ``Tables/running`` in the same step (``SharedJob``), so a job found
/// there is always running. No callback (work, completion, step, priority observer) runs under it.
package final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// What the registry holds, in two tables: the one every request looks up holds a reference
    /// per key, so that with thousands of misses in flight its lookups, growth and removals move
    /// references, not outcomes.
    struct Tables {
        /// The running jobs (each holds the registry until it ends).
        var running: [Key: SharedJob<Key, Value>] = [:]
        /// The outcomes of finished jobs, when the registry keeps them (``keepsFinished``). The
        /// outcome, not the job: a job holds its registry, so a kept job would keep the registry
        /// (and every outcome in it) alive for good.
        var finished: [Key: Result<Value, OspreyError>] = [:]
    }

    /// The tables, and the lock of every job in them.
    let jobs = Locked(Tables())
    /// Whether a finished job's outcome stays in the registry, answering later subscribers at
    /// once (an abandoned job is still forgotten). `true` for the decodes of one fetched source
    /// (``FetchedSource/decodes``): the fetch stage hands the bytes to its subscribers one by one,
    /// and a decode size that finished before the last of them asked must not run again; the
    /// registry lives as long as the bytes. `false` everywhere else: a finished job's result is
    /// in a cache, and the next request for its key must start afresh (a new download revalidates).
    let keepsFinished: Bool

    /// An empty registry; `keepsFinished` (default `false`): see ``keepsFinished``.
    package init(keepsFinished: Bool = false) {
        self.keepsFinished = keepsFinished
    }

    /// Subscribes to the job running for `key`, or creates one, subscribes, and runs `work` on it
    /// (synchronously: `work` starts the job's first step and returns). When the registry kept the
    /// outcome of a finished job for `key`, `completion` is called at once with it.
    /// - Returns: the job and the subscriber's id, to ``SharedJob/unsubscribe(_:)``; `nil` when
    ///   `completion` was already called.
    /// The subscriber has `priority` (default ``DownloadPriority/normal``; the job runs at the
    /// highest of its subscribers') and may name its `owner` (default none; see
    /// ``SharedJob/waiting``).
    func subscribe(
        _ key: Key, priority: DownloadPriority = .normal, owner: (any AnyObject & Sendable)? = nil,
        progress: SharedJob<Key, Value>.ProgressHandler?,
        completion: @escaping SharedJob<Key, Value>.Completion,
        work: (SharedJob<Key, Value>) -> Void
    ) -> (job: SharedJob<Key, Value>, id: Int)? {
        let joined = jobs.withLock { jobs -> Joined in
            if let existing = jobs.running[key] {
                let (id, notice) = existing.changing {
                    $0.subscribe(progress: progress, completion: completion, priority: priority, owner: owner)
                }
                return .waiting(existing, id: id, notice: notice)
            }
            if keepsFinished, let outcome = jobs.finished[key] { return .finished(outcome) }
            let job = SharedJob<Key, Value>(
                registry: self, key: key, progress: progress, completion: completion, priority: priority, owner: owner)
            jobs.running[key] = job
            return .started(job)
        }
        switch joined {
        case .started(let job):
            // Outside the lock: the work may finish the job at once.
            work(job)
            return (job, SharedJob<Key, Value>.firstID)
        case .waiting(let job, let id, let notice):
            // Outside the lock: the work's observer may take locks of its own (the downloader's).
            SharedJob<Key, Value>.tell(notice)
            return (job, id)
        case .finished(let outcome):
            completion(outcome)
            return nil
        }
    }

    /// How a request joined the job for its key.
    private enum Joined {
        /// A new job, made with the request as its first subscriber: its work is to be started.
        case started(SharedJob<Key, Value>)
        /// The running job, under this subscriber id, with the priority change to tell its work.
        case waiting(SharedJob<Key, Value>, id: Int, notice: SharedJob<Key, Value>.PriorityNotice?)
        /// The job for the key has finished with this outcome, kept by the registry.
        case finished(Result<Value, OspreyError>)
    }

    /// How many jobs are running or kept finished.
    package var count: Int { jobs.withLock { $0.running.count + $0.finished.count } }

    /// The running jobs.
    var inFlight: [SharedJob<Key, Value>] { jobs.withLock { Array($0.running.values) } }
}
