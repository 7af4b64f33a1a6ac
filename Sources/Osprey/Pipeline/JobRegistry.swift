/// The jobs in flight, by key. A finished or abandoned job is forgotten, so the next request for
/// its key starts new work (which usually finds the result in a cache).
final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let jobs = Locked<[Key: SharedJob<Key, Value>]>([:])

    /// Subscribes to the job in flight for `key`, or creates one, subscribes, and runs `work` on it
    /// (synchronously: `work` starts the job's first step and returns). When the job in flight has
    /// just finished, `completion` is called at once with its outcome.
    /// - Returns: the job and the subscriber's id, to ``SharedJob/unsubscribe(_:)``; `nil` when
    ///   `completion` was already called.
    func subscribe(_ key: Key, progress: SharedJob<Key, Value>.ProgressHandler?,
                   completion: @escaping SharedJob<Key, Value>.Completion,
                   work: (SharedJob<Key, Value>) -> Void) -> (job: SharedJob<Key, Value>, id: Int)? {
        while true {
            let (job, isNew) = jobs.withLock { jobs -> (SharedJob<Key, Value>, Bool) in
                if let existing = jobs[key] { return (existing, false) }
                // The registry holds a job only until it ends, when `forget` drops it.
                let job = SharedJob<Key, Value>(registry: self, key: key, progress: progress, completion: completion)
                jobs[key] = job
                return (job, true)
            }
            if isNew {
                work(job)
                return (job, SharedJob<Key, Value>.firstID)
            }
            switch job.subscribe(progress: progress, completion: completion) {
            case .waiting(let id):
                return (job, id)
            case .finished(let outcome):
                completion(outcome)
                return nil
            case .abandoned:
                // Its last subscriber left between the lookup and now: drop it and start afresh.
                forget(key, job)
            }
        }
    }

    /// How many jobs are in flight (for tests).
    var count: Int { jobs.withLock { $0.count } }

    /// The subscribers of the first job in flight whose key matches, or 0 (for tests).
    func subscribers(where matches: (Key) -> Bool) -> Int {
        let job = jobs.withLock { jobs in jobs.first { matches($0.key) }?.value }
        return job?.subscriberCount ?? 0
    }

    /// Drops `job`, which ended, unless a newer job took its key.
    func forget(_ key: Key, _ job: SharedJob<Key, Value>) {
        jobs.withLock { jobs in
            if jobs[key] === job { jobs.removeValue(forKey: key) }
        }
    }
}
