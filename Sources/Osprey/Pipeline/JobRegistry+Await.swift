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
        let waiter = Waiter()
        var shared = true
        let outcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Value, OspreyError>, Never>) in
                let subscription = subscribe(key, priority: priority, progress: nil, completion: { continuation.resume(returning: $0) }) { job in
                    shared = false
                    let task = Task {
                        do throws(OspreyError) {
                            job.finish(.success(try await work()))
                        } catch {
                            job.finish(.failure(error))
                        }
                    }
                    job.setStep(.task(task))
                }
                // `nil`: the outcome was delivered already.
                subscription.map { waiter.joined($0.job, id: $0.id, continuation) }
            }
        } onCancel: {
            waiter.cancel(.pipeline(.cancelled(source: "\(key)")))
        }
        return (try outcome.get(), shared)
    }

    /// One caller of ``value(for:priority:work:)`` while it waits: its subscription, or the
    /// cancellation that came before it had one. Whoever takes the subscription to leave and
    /// finds the caller still waiting (``SharedJob/unsubscribe(_:)``) resumes it with the
    /// cancellation; otherwise the job's outcome is on its way to it.
    private final class Waiter: Sendable {
        private typealias Subscription = (job: SharedJob<Key, Value>, id: Int, UnsafeContinuation<Result<Value, OspreyError>, Never>)
        private let state = Locked<(subscription: Subscription?, cancelled: OspreyError?)>((nil, nil))

        /// Records the caller's subscription; leaves at once when the caller was cancelled meanwhile.
        func joined(_ job: SharedJob<Key, Value>, id: Int, _ continuation: UnsafeContinuation<Result<Value, OspreyError>, Never>) {
            let cancelled = state.withLock { state in
                if state.cancelled == nil { state.subscription = (job, id, continuation) }
                return state.cancelled
            }
            if let cancelled, job.unsubscribe(id) { continuation.resume(returning: .failure(cancelled)) }
        }

        func cancel(_ error: OspreyError) {
            let subscription = state.withLock { state in
                state.cancelled = error
                return state.subscription.take()
            }
            if let (job, id, continuation) = subscription, job.unsubscribe(id) { continuation.resume(returning: .failure(error)) }
        }
    }
}
