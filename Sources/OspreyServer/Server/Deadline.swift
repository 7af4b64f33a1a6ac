import Osprey

/// A whole-request deadline.
///
/// The answer does not wait for the work to stop: processing (libvips) does not see
/// cancellation, so a job past its deadline is cancelled and left to finish in its worker slot
/// while the client gets its 504 on time.
enum Deadline {
    /// `body`'s result, or 504 when it takes longer than `limit` (the body is then cancelled), or 503
    /// when the calling task is cancelled first (the body is cancelled too).
    static func run<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws(ServerError) -> T) async throws(ServerError) -> T {
        let race = Race<T>()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, ServerError>, Never>) in
                let work = Task {
                    do throws(ServerError) { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    if !Task.isCancelled {
                        race.finish(.failure(ServerError(status: 504, reason: "the request took longer than its deadline of \(limit)")))
                    }
                }
                race.start(continuation, tasks: [work, timer])
            }
        } onCancel: {
            race.finish(.failure(ServerError(status: 503, reason: "the request was cancelled")))
        }
        return try outcome.get()
    }

    /// The first outcome wins: it resumes the waiting caller once and cancels the tasks.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<T, ServerError>, Never>?
            var outcome: Result<T, ServerError>?
            var tasks: [Task<Void, Never>] = []
        }

        private let state = Locked(State())

        func start(_ continuation: CheckedContinuation<Result<T, ServerError>, Never>, tasks: [Task<Void, Never>]) {
            let early = state.withLock { state -> Result<T, ServerError>? in
                guard let outcome = state.outcome else {
                    state.continuation = continuation
                    state.tasks = tasks
                    return nil
                }
                return outcome
            }
            if let early {
                tasks.forEach { $0.cancel() }
                continuation.resume(returning: early)
            }
        }

        func finish(_ outcome: Result<T, ServerError>) {
            let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<Result<T, ServerError>, Never>?, [Task<Void, Never>]) in
                if state.outcome != nil { return (nil, []) }
                state.outcome = outcome
                defer {
                    state.continuation = nil
                    state.tasks = []
                }
                return (state.continuation, state.tasks)
            }
            tasks.forEach { $0.cancel() }
            continuation?.resume(returning: outcome)
        }
    }
}
