import Foundation

/// What a test waited for past its deadline: thrown by ``withDeadline(_:within:_:)``, so a hang fails
/// the test with a message instead of outliving the suite's time limit.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What the test waited for (the `what` it passed).
    public let what: String
    /// How long it waited.
    public let limit: Duration

    /// An error saying that the wait for `what` passed `limit`.
    public init(what: String, limit: Duration) {
        self.what = what
        self.limit = limit
    }

    public var description: String { "waited more than \(limit) for \(what)" }
}

/// `body`'s result, or ``DeadlineExceeded`` naming `what` when `body` has not finished within
/// `limit` (default 60 seconds).
///
/// A suite's time limit cancels the test's task, and a wait that ignores cancellation (a NIO
/// future, a continuation nobody resumes) then hangs the run. Here `body` runs in a task of its
/// own, with the caller's isolation, and the caller is resumed by whichever comes first, `body`'s
/// outcome or the deadline: past it, `body` is cancelled and left behind, never awaited. The
/// caller's own cancellation ends the wait at once, with `CancellationError`.
public func withDeadline<T: Sendable>(
    _ what: @autoclosure () -> String, within limit: Duration = .seconds(60),
    _ body: sending @escaping @isolated(any) () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    let description = what()
    let work = Task(operation: body)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let waiter = Task { race.finish(await work.result) }
            let timer = Task {
                try? await Task.sleep(for: limit)
                race.finish(.failure(DeadlineExceeded(what: description, limit: limit)))
            }
            race.start(continuation, cancelling: [work.cancel, waiter.cancel, timer.cancel])
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first outcome resumes the caller and cancels the racing tasks; later ones are dropped.
private final class DeadlineRace<T: Sendable>: @unchecked Sendable {
    // @unchecked: every stored property is read and written only under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var cancels: [@Sendable () -> Void] = []
    private var outcome: Result<T, any Error>?

    /// Records the waiting caller, or resumes it at once when an outcome came first.
    func start(_ continuation: CheckedContinuation<T, any Error>, cancelling cancels: [@Sendable () -> Void]) {
        lock.lock()
        guard let outcome else {
            self.continuation = continuation
            self.cancels = cancels
            return lock.unlock()
        }
        lock.unlock()
        cancels.forEach { $0() }
        continuation.resume(with: outcome)
    }

    func finish(_ result: Result<T, any Error>) {
        lock.lock()
        guard outcome == nil else { return lock.unlock() }
        outcome = result
        let continuation = self.continuation, cancels = self.cancels
        self.continuation = nil
        self.cancels = []
        lock.unlock()
        cancels.forEach { $0() }
        continuation?.resume(with: result)
    }
}

extension Task where Failure == Never {
    /// The task's value, or ``DeadlineExceeded`` naming `what` when it has not finished within
    /// `limit` (default 60 seconds; the task is then cancelled).
    public func value(within limit: Duration = .seconds(60), _ what: @autoclosure () -> String) async throws -> Success {
        let task = self
        do {
            return try await withDeadline(what(), within: limit) { await task.value }
        } catch let error as DeadlineExceeded {
            task.cancel()
            throw error
        }
    }
}

extension Task where Failure == any Error {
    /// The task's value (or its error), or ``DeadlineExceeded`` naming `what` when it has not
    /// finished within `limit` (default 60 seconds; the task is then cancelled).
    public func value(within limit: Duration = .seconds(60), _ what: @autoclosure () -> String) async throws -> Success {
        let task = self
        do {
            return try await withDeadline(what(), within: limit) { try await task.value }
        } catch let error as DeadlineExceeded {
            task.cancel()
            throw error
        }
    }
}
