import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

/// Regressions found by the soak (`Benchmarks/soak/`): the answer on time when the work does not
/// stop, the queue gauge after refusals, readiness while the queue is full.
@Suite("Server faults: deadline, queue gauge, saturation", .serialized, .timeLimit(.minutes(3)))
struct FaultTests {
    /// Work that ignores cancellation (like libvips processing): it waits on a gate that only
    /// the test opens, and says when it is done.
    private final class Stubborn: Sendable {
        let done = Locked(false)
        private let gate = Locked<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func work() async {
            // A continuation does not end on cancellation: the work goes on until the gate opens.
            await withCheckedContinuation { continuation in
                let resumeNow = gate.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            done.withLock { $0 = true }
        }

        func open() {
            gate.withLock { state in
                state.open = true
                return state.waiter.take()
            }?.resume()
        }
    }

    @Test("the deadline answers 504 without waiting for work that ignores cancellation")
    func deadlineDoesNotWaitForTheWork() async throws {
        let stubborn = Stubborn()
        let outcome: Result<Int, ServerError>
        do throws(ServerError) {
            outcome = .success(
                try await Deadline.run(.milliseconds(50)) { () async throws(ServerError) -> Int in
                    await stubborn.work()
                    return 1
                })
        } catch {
            outcome = .failure(error)
        }
        // The work cannot have ended: its gate is still shut.
        #expect(stubborn.done.withLock { $0 } == false)
        #expect(throws: ServerError.self) { try outcome.get() }
        if case .failure(let error) = outcome { #expect(error.status == 504) }
        stubborn.open()
    }

    @Test("the deadline returns the body's value and error when they come first")
    func deadlinePassesResults() async throws {
        let value = try await Deadline.run(.seconds(30)) { () async throws(ServerError) -> Int in 7 }
        #expect(value == 7)
        do throws(ServerError) {
            _ = try await Deadline.run(.seconds(30)) { () async throws(ServerError) -> Int in throw .notFound("gone") }
            Issue.record("no error")
        } catch {
            #expect(error.status == 404)
        }
    }

    @Test("refused and cancelled jobs leave the queued gauge; /health is 503 while the queue is full")
    func queueGaugeAndSaturation() async throws {
        let origin = try await LoopbackOrigin.start()
        for index in 0..<4 { origin.set("/slow\(index).jpg", body: TestImages.photo, delay: .seconds(4)) }
        let server = try await ServerHarness.start {
            $0.workers = 1
            $0.queue = 1
        }
        let limiter = server.server.service.limiter
        let first = Task { try await server.get("/unsafe/40x40/\(origin.address("/slow0.jpg"))") }
        let second = Task { try await server.get("/unsafe/40x40/\(origin.address("/slow1.jpg"))") }
        try await eventually("the worker limiter to saturate") { limiter.isSaturated }
        let health = try await server.get("/health")
        #expect(health.status == 503)
        #expect(health.text.contains("queue is full"))
        let refused = try await server.get("/unsafe/40x40/\(origin.address("/slow2.jpg"))")
        #expect(refused.status == 429)
        #expect(try await first.value.status == 200)
        #expect(try await second.value.status == 200)
        #expect(try await server.get("/health").status == 200)
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_queued_requests 0"), "\(metrics.split(separator: "\n").filter { $0.contains("queued") })")
        #expect(metrics.contains("osprey_in_flight_requests 0"))
        await server.stop()
        await origin.stop()
    }

    @Test("the limiter is saturated exactly when every worker runs and the queue is full")
    func saturation() async throws {
        let limiter = WorkLimiter(workers: 1, queueLimit: 1)
        #expect(!limiter.isSaturated)
        let gate = AsyncStream<Void>.makeStream()
        let running = Task { try await limiter.run { () async throws(ServerError) in for await _ in gate.stream {} } }
        try await eventually("a running job") { limiter.running > 0 }
        #expect(!limiter.isSaturated, "one worker busy, the queue empty")
        let waiting = Task { try await limiter.run { () async throws(ServerError) in } }
        try await eventually("a queued job") { limiter.queued > 0 }
        #expect(limiter.isSaturated)
        gate.continuation.finish()
        _ = try await running.value("the running job")
        _ = try await waiting.value("the queued job")
        #expect(!limiter.isSaturated)
    }
}
