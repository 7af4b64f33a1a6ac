import Foundation
import Synchronization
import Testing

@testable import Osprey

@Suite("Job table: one keyed job, shared by its callers", .timeLimit(.minutes(1)))
struct JobRegistryTests {
    /// Work held until its gate opens, counting its runs and whether it saw a cancellation.
    final class GatedWork: Sendable {
        let runs = Atomic<Int>(0)
        let cancelled = Atomic<Bool>(false)
        let gate = AsyncStream<Void>.makeStream()

        func run(_ value: Int) async throws(OspreyError) -> Int {
            runs.add(1, ordering: .relaxed)
            for await _ in gate.stream {}
            if Task.isCancelled {
                cancelled.store(true, ordering: .relaxed)
                throw .pipeline(.cancelled(source: "work"))
            }
            return value
        }

        func open() { gate.continuation.finish() }
    }

    static func waitForSubscribers(_ registry: JobRegistry<String, Int>, _ count: Int) async throws {
        while registry.subscribers(where: { _ in true }) < count { try await Task.sleep(for: .milliseconds(2)) }
    }

    @Test("callers of one key join one job: the work runs once and every caller gets its value")
    func join() async throws {
        let registry = JobRegistry<String, Int>(), work = GatedWork()
        let first = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(7) } }
        try await Self.waitForSubscribers(registry, 1)
        let second = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(8) } }
        try await Self.waitForSubscribers(registry, 2)
        work.open()
        let (a, b) = (try await first.value, try await second.value)
        #expect(a.0 == 7 && !a.shared && b.0 == 7 && b.shared)
        let runs = work.runs.load(ordering: .relaxed)
        #expect(runs == 1 && registry.count == 0)
    }

    @Test("a caller that leaves gets a cancellation; the others still get the value")
    func leave() async throws {
        let registry = JobRegistry<String, Int>(), work = GatedWork()
        let leaving = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(1) } }
        try await Self.waitForSubscribers(registry, 1)
        let staying = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(2) } }
        try await Self.waitForSubscribers(registry, 2)
        leaving.cancel()
        await #expect(throws: OspreyError.self) { try await leaving.value }
        work.open()
        #expect(try await staying.value.0 == 1)
        let cancelled = work.cancelled.load(ordering: .relaxed)
        #expect(!cancelled)
    }

    @Test("the last caller to leave cancels the work; the next caller starts afresh")
    func lastLeaverCancels() async throws {
        let registry = JobRegistry<String, Int>(), work = GatedWork()
        let only = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(1) } }
        try await Self.waitForSubscribers(registry, 1)
        only.cancel()
        await #expect(throws: OspreyError.self) { try await only.value }
        work.open()
        while !work.cancelled.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(2)) }
        #expect(registry.count == 0)
        let next = try await registry.value(for: "a") { () throws(OspreyError) in 5 }
        #expect(next.0 == 5 && !next.shared)
    }

    @Test("an error fans out to every caller once, from one run")
    func errorFansOut() async throws {
        let registry = JobRegistry<String, Int>(), runs = Atomic<Int>(0)
        let gate = AsyncStream<Void>.makeStream()
        let failing: @Sendable () async throws(OspreyError) -> Int = { () throws(OspreyError) in
            runs.add(1, ordering: .relaxed)
            for await _ in gate.stream {}
            throw .pipeline(.imageNotExisting(key: "a"))
        }
        let callers = (0..<3).map { _ in Task { try await registry.value(for: "a", work: failing) } }
        try await Self.waitForSubscribers(registry, 3)
        gate.continuation.finish()
        for caller in callers {
            await #expect(throws: OspreyError.pipeline(.imageNotExisting(key: "a"))) { try await caller.value }
        }
        let ran = runs.load(ordering: .relaxed)
        #expect(ran == 1)
    }
}

@Suite("Steps recorded late do not replace newer ones", .timeLimit(.minutes(1)))
struct LateStepTests {
    @Test("a Swift task recorded after its body recorded the next step: cancelling stops the next step")
    func lateTaskStep() async throws {
        let registry = JobRegistry<String, Int>()
        let inner = JobRegistry<String, Int>()
        let subscription = registry.subscribe("outer", progress: nil, completion: { _ in }) { job in
            let steps = job.steps
            // The body has already moved on to the next step (a subscription of its own) when
            // the task that ran it is recorded: the order a fast disk lookup produces.
            let next = inner.subscribe("inner", progress: nil, completion: { _ in }) { _ in }
            if let (innerJob, id) = next { job.setStep(.subscription(innerJob, id: id)) }
            let finished = Task<Void, Never> {}
            job.setStep(.task(finished), ifStepsSince: steps)
        }
        let (job, id) = try #require(subscription)
        #expect(inner.count == 1)
        job.unsubscribe(id)
        // The last subscriber left: the recorded step is the inner subscription, which is left too.
        #expect(inner.count == 0)
    }
}
