import Osprey

/// Identical in-flight jobs share one task: the first request for a key starts it, later ones
/// wait for its result. A request whose task is cancelled (its client went away) leaves; the job
/// is cancelled only when no request is left waiting for it.
final class Coalescer<Value: Sendable>: Sendable {
    private struct Job {
        let task: Task<Value, any Error>
        var waiting: Int
    }

    private let jobs = Locked<[String: Job]>([:])

    /// Jobs in flight now.
    var count: Int { jobs.withLock { $0.count } }

    /// The value of the job under `key`, starting `work` when none runs; `shared` tells whether
    /// the caller joined a running job.
    func value(for key: String, _ work: @escaping @Sendable () async throws(ServerError) -> Value) async throws(ServerError) -> (Value, shared: Bool)
    {
        let (task, shared) = jobs.withLock { jobs -> (Task<Value, any Error>, Bool) in
            if var job = jobs[key] {
                job.waiting += 1
                jobs[key] = job
                return (job.task, true)
            }
            let task = Task<Value, any Error> { try await work() }
            jobs[key] = Job(task: task, waiting: 1)
            return (task, false)
        }
        let result = await withTaskCancellationHandler {
            await task.result
        } onCancel: {
            leave(key, task: task, cancelling: true)
        }
        if !Task.isCancelled { leave(key, task: task, cancelling: false) }
        switch result {
        case .success(let value): return (value, shared)
        case .failure(let error as ServerError): throw error
        case .failure(let error): throw ServerError(status: 503, reason: "the job was cancelled: \(error)")
        }
    }

    private func leave(_ key: String, task: Task<Value, any Error>, cancelling: Bool) {
        let cancel = jobs.withLock { jobs -> Bool in
            guard var job = jobs[key], job.task == task else { return false }
            job.waiting -= 1
            if job.waiting <= 0 {
                jobs[key] = nil
                return cancelling
            }
            jobs[key] = job
            return false
        }
        if cancel { task.cancel() }
    }
}
