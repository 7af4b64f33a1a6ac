/// The jobs in flight, by key: Osprey's one way to share work. A finished or abandoned job is
/// forgotten, so the next request for its key starts new work (which usually finds the result in
/// a cache). The pipeline's stages subscribe with callbacks
/// (``subscribe(_:progress:completion:work:)``); the data stage and the server await a job's value
/// (``value(for:work:)``).
///
/// Lock order: the registry's lock, then a job's. A job never holds its own lock while calling
/// the registry (``SharedJob`` calls ``forget(_:_:)`` without holding it), so the two cannot
/// deadlock.
package final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let jobs = Locked<[Key: SharedJob<Key, Value>]>([:])
    /// Whether a finished job stays in the registry, its outcome answering later subscribers at
    /// once (an abandoned one is still forgotten). `true` for the decodes of one fetched source
    /// (``FetchedSource/decodes``): the fetch stage hands the bytes to its subscribers one by one,
    /// and a decode size that finished before the last of them asked must not run again; the
    /// registry lives as long as the bytes. `false` everywhere else: a finished job's result is
    /// in a cache, and the next request for its key must start afresh (a new download revalidates).
    let keepsFinished: Bool

    /// An empty registry; `keepsFinished` (default `false`): see ``keepsFinished``.
    package init(keepsFinished: Bool = false) {
        self.keepsFinished = keepsFinished
    }

    /// How a request joined the job for its key.
    private enum Joined {
        /// A new job, made with the request as its first subscriber: its work is to be started.
        case started(SharedJob<Key, Value>)
        /// The job in flight, under this subscriber id; `notice` tells its work of a new priority.
        case waiting(SharedJob<Key, Value>, id: Int, notice: (@Sendable () -> Void)?)
        /// The job in flight had just finished, with this outcome (not yet forgotten).
        case finished(Result<Value, OspreyError>)
    }

    /// Subscribes to the job in flight for `key`, or creates one, subscribes, and runs `work` on it
    /// (synchronously: `work` starts the job's first step and returns). When the job in flight has
    /// just finished, `completion` is called at once with its outcome.
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
            if let existing = jobs[key] {
                switch existing.join(progress: progress, completion: completion, priority: priority, owner: owner) {
                case (.waiting(let id), let notice): return .waiting(existing, id: id, notice: notice)
                case (.finished(let outcome), _): return .finished(outcome)
                // Its last subscriber left; its own `forget` will find the new job and leave it.
                case (.cancelled, _): break
                }
            }
            // The registry holds a job only until it ends, when `forget` drops it.
            let job = SharedJob<Key, Value>(
                registry: self, key: key, progress: progress, completion: completion, priority: priority, owner: owner)
            jobs[key] = job
            return .started(job)
        }
        switch joined {
        case .started(let job):
            // Outside the lock: the work may finish the job at once, which forgets it.
            work(job)
            return (job, SharedJob<Key, Value>.firstID)
        case .waiting(let job, let id, let notice):
            // Outside the lock: the work's observer may take locks of its own (the downloader's).
            notice?()
            return (job, id)
        case .finished(let outcome):
            completion(outcome)
            return nil
        }
    }

    /// How many jobs are in flight.
    package var count: Int { jobs.withLock { $0.count } }

    /// The jobs in flight.
    var inFlight: [SharedJob<Key, Value>] { jobs.withLock { Array($0.values) } }

    /// Drops `job`, which ended, unless a newer job took its key.
    func forget(_ key: Key, _ job: SharedJob<Key, Value>) {
        jobs.withLock { jobs in
            if jobs[key] === job { jobs.removeValue(forKey: key) }
        }
    }
}
