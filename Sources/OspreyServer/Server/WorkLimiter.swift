import Foundation
import Osprey

/// Back-pressure: at most ``workers`` jobs run at once and at most ``queueLimit`` wait; a job
/// beyond that is refused at once (429 with `Retry-After`) instead of timing out. A waiting job
/// whose task is cancelled (its client went away) leaves the queue.
final class WorkLimiter: Sendable {
    /// Jobs run at once (> 0).
    let workers: Int
    /// Jobs allowed to wait (≥ 0).
    let queueLimit: Int

    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID: UInt64 = 0
        /// When a job last finished or started (the queue is stuck when nothing moves).
        var lastProgress = ContinuousClock.now
        /// Jobs finished since the start.
        var finished: UInt64 = 0
    }

    private let state = Locked(State())

    init(workers: Int, queueLimit: Int) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
    }

    /// Jobs running now.
    var running: Int { state.withLock { $0.running } }
    /// Jobs waiting now.
    var queued: Int { state.withLock { $0.waiting.count } }
    /// Jobs finished since the start.
    var finished: UInt64 { state.withLock { $0.finished } }

    /// Whether every worker is busy and the queue is full, so that a new job would get 429.
    var isSaturated: Bool { state.withLock { $0.running >= workers && $0.waiting.count >= queueLimit } }

    /// Whether jobs are waiting while nothing has started or finished for `interval`.
    func isStuck(after interval: Duration) -> Bool {
        state.withLock { !$0.waiting.isEmpty && ContinuousClock.now - $0.lastProgress > interval }
    }

    /// Runs `body` in a worker slot, waiting in the queue when all are busy. Throws 429 when the
    /// queue is full and 503 when the task is cancelled while waiting.
    func run<T: Sendable>(_ body: () async throws(ServerError) -> T) async throws(ServerError) -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws(ServerError) {
        enum Decision {
            case run
            case wait(UInt64)
            case refuse
        }
        let decision: Decision = state.withLock { state in
            if state.running < workers {
                state.running += 1
                state.lastProgress = .now
                return .run
            }
            guard state.waiting.count < queueLimit else { return .refuse }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch decision {
        case .run: return
        case .refuse:
            throw ServerError(
                status: 429, reason: "the server is busy: \(workers) jobs running and \(queueLimit) waiting; retry later", retryAfter: 1)
        case .wait(let id):
            let granted = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let cancelled = state.withLock { state -> Bool in
                        if Task.isCancelled { return true }
                        state.waiting.append((id, continuation))
                        return false
                    }
                    if cancelled { continuation.resume(returning: false) }
                }
            } onCancel: {
                let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiting.remove(at: index).continuation
                }
                continuation?.resume(returning: false)
            }
            guard granted else { throw ServerError(status: 503, reason: "the request was cancelled while waiting for a worker") }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            state.lastProgress = .now
            state.finished &+= 1
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}
