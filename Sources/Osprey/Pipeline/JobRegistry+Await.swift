/// Awaiting a shared job: the form of ``JobRegistry`` for work written as `async` code (the data
/// stage, the server's results), on the same jobs and state machine as the pipeline's callbacks.
extension JobRegistry {
    /// The value of the job under `key`, running `work` in a Swift task of its own when no job
    /// for `key` runs; `shared` is `true` when the caller joined a running job. Cancelling the
    /// calling task leaves the job at once (it throws ``OspreyError/PipelineReason/cancelled(source:)``
    /// naming `key`); the last caller to leave cancels `work`'s task.
    /// The caller waits at `priority` (default ``DownloadPriority/normal``).
    package func value(
        for key: Key, priority: DownloadPriority = .normal, work: @escaping @Sendable () async throws(OspreyError) -> Value
    ) async throws(OspreyError) -> (Value, shared: Bool) {
        let subscription = JobSubscription<Key, Value, UnsafeContinuation<Result<Value, OspreyError>, Never>>()
        // Made only for a caller that is cancelled: describing the key costs a string per call.
        @Sendable func cancelled() -> Result<Value, OspreyError> { .failure(.pipeline(.cancelled(source: "\(key)"))) }
        var shared = true
        let outcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Value, OspreyError>, Never>) in
                let joined = subscribe(key, priority: priority, progress: nil, completion: { continuation.resume(returning: $0) }) { job in
                    shared = false
                    job.setStep(
                        .startingTask {
                            do throws(OspreyError) {
                                job.finish(.success(try await work()))
                            } catch {
                                job.finish(.failure(error))
                            }
                        })
                }
                // `nil`: the outcome was delivered already.
                if let (job, id) = joined, let continuation = subscription.joined(job, id: id, continuation) {
                    continuation.resume(returning: cancelled())
                }
            }
        } onCancel: {
            subscription.leave()?.resume(returning: cancelled())
        }
        return (try outcome.get(), shared)
    }
}
