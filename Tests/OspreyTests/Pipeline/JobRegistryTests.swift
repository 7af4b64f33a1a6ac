import Foundation
import OspreyTestSupport
import Synchronization
import Testing

@testable import Osprey

@Suite("Job table: one keyed job, shared by its callers", .timeLimit(.minutes(5)))
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
        try await eventually("\(count) waiting callers") { registry.waitingCount() >= count }
    }

    @Test("callers of one key join one job: the work runs once and every caller gets its value")
    func join() async throws {
        let registry = JobRegistry<String, Int>(), work = GatedWork()
        let first = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(7) } }
        try await Self.waitForSubscribers(registry, 1)
        let second = Task { try await registry.value(for: "a") { () throws(OspreyError) in try await work.run(8) } }
        try await Self.waitForSubscribers(registry, 2)
        work.open()
        let (a, b) = (try await first.value("the first caller's value"), try await second.value("the second caller's value"))
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
        try await eventually("the work to be cancelled") { work.cancelled.load(ordering: .relaxed) }
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

@Suite("Job table: a job runs at the highest priority of its subscribers", .timeLimit(.minutes(1)))
struct JobPriorityTests {
    /// Starts a job under "a" whose work observes its priority, recording each change told.
    static func start(
        _ registry: JobRegistry<String, Int>, at priority: DownloadPriority, told: Collector<DownloadPriority>
    ) throws -> (job: SharedJob<String, Int>, id: Int) {
        let subscription = registry.subscribe("a", priority: priority, progress: nil, completion: { _ in }) { job in
            job.observePriority { priority in told.append(priority) }
        }
        return try #require(subscription)
    }

    static func join(_ registry: JobRegistry<String, Int>, at priority: DownloadPriority) throws -> Int {
        let subscription = registry.subscribe("a", priority: priority, progress: nil, completion: { _ in }) { _ in
            Issue.record("a second subscriber joins the job in flight")
        }
        return try #require(subscription).id
    }

    @Test("a subscriber of higher priority raises the job's; a lower one does not")
    func raiseOnJoin() throws {
        let registry = JobRegistry<String, Int>(), told = Collector<DownloadPriority>()
        let (job, _) = try Self.start(registry, at: .low, told: told)
        #expect(job.priority == .low)
        _ = try Self.join(registry, at: .veryLow)
        #expect(job.priority == .low)
        _ = try Self.join(registry, at: .high)
        #expect(job.priority == .high)
        #expect(told.values == [.high], "the work is told of the raise only")
    }

    @Test("the highest subscriber leaving lowers the job's priority to the highest left")
    func lowerOnLeave() throws {
        let registry = JobRegistry<String, Int>(), told = Collector<DownloadPriority>()
        let (job, first) = try Self.start(registry, at: .normal, told: told)
        let high = try Self.join(registry, at: .veryHigh)
        let low = try Self.join(registry, at: .low)
        job.unsubscribe(high)
        #expect(job.priority == .normal)
        job.unsubscribe(first)
        #expect(job.priority == .low)
        #expect(told.values == [.veryHigh, .normal, .low])
        job.unsubscribe(low)
        #expect(registry.count == 0, "the last leaver cancels the job")
        #expect(told.values.count == 3, "a cancelled job tells nothing more")
    }

    @Test("a subscriber changing its priority re-computes the job's")
    func changeOfPriority() throws {
        let registry = JobRegistry<String, Int>(), told = Collector<DownloadPriority>()
        let (job, first) = try Self.start(registry, at: .normal, told: told)
        let second = try Self.join(registry, at: .low)
        job.setPriority(.veryHigh, of: second)
        #expect(job.priority == .veryHigh)
        job.setPriority(.veryLow, of: second)
        #expect(job.priority == .normal)
        job.setPriority(.normal, of: first)
        #expect(told.values == [.veryHigh, .normal])
        job.finish(.success(1))
        job.setPriority(.veryHigh, of: first)
        #expect(told.values.count == 2, "a finished job tells nothing more")
    }

    @Test("the last subscriber leaving cancels the work's step once; the others' leaving does not")
    func lastLeaverCancelsStep() throws {
        let registry = JobRegistry<String, Int>(), upstream = JobRegistry<String, Int>()
        let (job, first) = try Self.start(registry, at: .normal, told: Collector())
        let step = try #require(upstream.subscribe("up", progress: nil, completion: { _ in }) { _ in })
        job.setStep(.subscription(step.job, id: step.id))
        let second = try Self.join(registry, at: .high)
        #expect(job.unsubscribe(second))
        #expect(upstream.count == 1)
        #expect(job.unsubscribe(first))
        #expect(upstream.count == 0, "the step was left")
        #expect(!job.unsubscribe(first), "leaving twice is leaving once")
    }

    @Test("an outcome fans out to every subscriber once, in the order they came")
    func fanOutOnce() throws {
        let registry = JobRegistry<String, Int>(), got = Collector<Int>()
        var job: SharedJob<String, Int>?
        for index in 0..<3 {
            let subscription = registry.subscribe(
                "a", progress: nil, completion: { outcome in got.append(index * 10 + ((try? outcome.get()) ?? -1)) }
            ) { _ in }
            job = job ?? subscription?.job
        }
        job?.finish(.success(1))
        job?.finish(.success(2))
        #expect(got.values == [1, 11, 21])
    }
}

@Suite("Steps recorded late do not replace newer ones", .timeLimit(.minutes(1)))
struct LateStepTests {
    @Test("a Swift task whose body records the next step at once: cancelling stops the next step, not the finished task")
    func lateTaskStep() async throws {
        let registry = JobRegistry<String, Int>()
        let inner = JobRegistry<String, Int>()
        let recorded = Collector<Int>()
        let subscription = registry.subscribe("outer", progress: nil, completion: { _ in }) { job in
            // The body moves on to the next step (a subscription of its own) as soon as it runs:
            // the order a fast disk lookup produces.
            job.setStep(
                .startingTask {
                    let next = inner.subscribe("inner", progress: nil, completion: { _ in }) { _ in }
                    if let (innerJob, id) = next { job.setStep(.subscription(innerJob, id: id)) }
                    recorded.append(1)
                })
        }
        let (job, id) = try #require(subscription)
        _ = await recorded.wait(for: 1)
        #expect(inner.count == 1)
        job.unsubscribe(id)
        // The last subscriber left: the recorded step is the inner subscription, which is left too.
        #expect(inner.count == 0)
    }
}

extension JobRegistry {
    /// How many subscribers wait for the first job in flight whose key matches (0 when none):
    /// read through the jobs' own subscriber lists.
    func waitingCount(where matches: (Key) -> Bool = { _ in true }) -> Int {
        inFlight.first { matches($0.key) }?.waiting.count ?? 0
    }
}
