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
        let outcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<(Result<Value, OspreyError>, Bool), Never>) in
                waiter.set(continuation)
                var started = false
                let subscription = subscribe(
                    key, priority: priority, progress: nil,
                    completion: { outcome in waiter.resume(outcome) },
                    work: { job in
                        started = true
                        let task = Task {
                            do throws(OspreyError) {
                                job.finish(.success(try await work()))
                            } catch {
                                job.finish(.failure(error))
                            }
                        }
                        job.setStep(.task(task))
                    })
                waiter.joined(subscription, shared: !started)
            }
        } onCancel: {
            waiter.cancel(.pipeline(.cancelled(source: "\(key)")))
        }
        return (try outcome.0.get(), outcome.1)
    }

    /// One caller of ``value(for:work:)``: resumes its continuation once, with the job's outcome or
    /// with the caller's cancellation, whichever comes first, and leaves the job when cancelled.
    private final class Waiter: Sendable {
        private struct State {
            var continuation: UnsafeContinuation<(Result<Value, OspreyError>, Bool), Never>?
            var subscription: (job: SharedJob<Key, Value>, id: Int)?
            var shared = false
            var cancelled: OspreyError?
        }
        private let state = Locked(State())

        func set(_ continuation: UnsafeContinuation<(Result<Value, OspreyError>, Bool), Never>) {
            state.withLock { $0.continuation = continuation }
        }

        /// Records the subscription (`nil`: the outcome was delivered already); leaves at once
        /// when the caller was cancelled meanwhile.
        func joined(_ subscription: (job: SharedJob<Key, Value>, id: Int)?, shared: Bool) {
            let cancelled = state.withLock { state -> OspreyError? in
                state.subscription = subscription
                state.shared = shared
                return state.cancelled
            }
            if let cancelled { cancel(cancelled) }
        }

        func resume(_ outcome: Result<Value, OspreyError>) {
            let taken = state.withLock { state in (state.continuation.take(), state.shared) }
            taken.0?.resume(returning: (outcome, taken.1))
        }

        func cancel(_ error: OspreyError) {
            let (continuation, subscription) = state.withLock { state in
                state.cancelled = error
                return (state.continuation.take(), state.subscription.take())
            }
            subscription.map { $0.job.unsubscribe($0.id) }
            continuation?.resume(returning: (.failure(error), false))
        }
    }
}
