import Foundation
import Testing

@testable import Osprey

/// The callback-driven job layer on its own: no network, every step driven by the test.
@Suite("Shared jobs", .timeLimit(.minutes(5)))
struct SharedJobTests {
    private typealias Registry = JobRegistry<String, Int>

    @Test("finish calls every subscriber once, in the order they came, and the registry forgets the job")
    func finishDelivers() {
        let registry = Registry()
        let results = Collector<String>()
        var started = 0
        let first = registry.subscribe("a", progress: nil, completion: { results.append("first \(try! $0.get())") }) { _ in started += 1 }
        let second = registry.subscribe("a", progress: nil, completion: { results.append("second \(try! $0.get())") }) { _ in started += 1 }
        #expect(started == 1, "the second request joins the first one's work")
        #expect(first?.job === second?.job)
        first?.job.finish(.success(7))
        first?.job.finish(.success(8))
        #expect(results.values == ["first 7", "second 7"])
        #expect(registry.count == 0)
    }

    @Test("finish(sharedAs:) hands several subscribers the shared value, made once; one subscriber, or a failure, gets the outcome as it is")
    func finishSharedAs() {
        let registry = Registry()
        let results = Collector<String>()
        let shares = Collector<Int>()
        let share: (Int) -> Int = { value in
            shares.append(value)
            return value * 100
        }
        let one = registry.subscribe("alone", progress: nil, completion: { results.append("alone \(try! $0.get())") }) { _ in }!
        one.job.finish(.success(2), sharedAs: share)
        let first = registry.subscribe("pair", progress: nil, completion: { results.append("first \(try! $0.get())") }) { _ in }!
        _ = registry.subscribe("pair", progress: nil, completion: { results.append("second \(try! $0.get())") }) { _ in }
        first.job.finish(.success(3), sharedAs: share)
        let failing = registry.subscribe("failing", progress: nil, completion: { results.append("failing \((try? $0.get()) == nil)") }) { _ in }!
        _ = registry.subscribe("failing", progress: nil, completion: { results.append("failing too \((try? $0.get()) == nil)") }) { _ in }
        failing.job.finish(.failure(.pipeline(.imageNotExisting(key: "failing"))), sharedAs: share)
        #expect(results.values == ["alone 2", "first 300", "second 300", "failing true", "failing too true"])
        #expect(shares.values == [3], "made once, for the two subscribers")
    }

    @Test("the last subscriber leaving cancels the work once; the others leaving do not")
    func lastLeaverCancels() {
        let registry = Registry()
        let cancels = Collector<Int>()
        let first = registry.subscribe("b", progress: nil, completion: { _ in Issue.record("a subscriber that left is not called") }) { job in
            job.setStep(.subscription(RecordingUpstream(cancels), id: 1))
        }!
        let second = registry.subscribe("b", progress: nil, completion: { _ in Issue.record("a subscriber that left is not called") }) { _ in }!
        first.job.unsubscribe(first.id)
        #expect(cancels.values.isEmpty)
        #expect(registry.count == 1)
        second.job.unsubscribe(second.id)
        second.job.unsubscribe(second.id)
        #expect(cancels.values == [1])
        #expect(registry.count == 0, "an abandoned job is forgotten: the next request starts afresh")
        // A step started after the abandonment is stopped at once.
        second.job.setStep(.subscription(RecordingUpstream(cancels), id: 2))
        #expect(cancels.values == [1, 2])
        // Finishing an abandoned job calls nobody.
        second.job.finish(.success(1))
    }

    @Test(
        "a registry that keeps finished jobs hands the outcome to a late subscriber without running the work again; one that forgets them, or an abandoned job, starts afresh"
    )
    func lateSubscribers() {
        let registry = Registry()
        let keeping = Registry(keepsFinished: true)
        _ = keeping.subscribe("c", progress: nil, completion: { _ in }) { $0.finish(.success(3)) }!
        let late = Collector<Int>()
        var runs = 0
        let answer = keeping.subscribe("c", progress: nil, completion: { late.append(try! $0.get()) }) { _ in runs += 1 }
        #expect(answer == nil && late.values == [3] && runs == 0 && keeping.count == 1)
        let forgotten = registry.subscribe("c", progress: nil, completion: { _ in }) { $0.finish(.success(4)) }!
        #expect(registry.count == 0)
        var started = 0
        let again = registry.subscribe("c", progress: nil, completion: { _ in }) { _ in started += 1 }
        #expect(started == 1 && again?.job !== forgotten.job, "a finished job is out of its registry: the next request starts afresh")
        let abandoned = registry.subscribe("d", progress: nil, completion: { _ in }) { _ in }!
        abandoned.job.unsubscribe(abandoned.id)
        #expect(registry.count == 1, "only the new job for c")
        let fresh = registry.subscribe("d", progress: nil, completion: { _ in }) { _ in started += 1 }
        #expect(started == 2 && fresh?.job !== abandoned.job)
    }

    @Test("a registry that keeps finished outcomes is freed with its last user: no finished job holds it")
    func keptOutcomesAreFreed() {
        weak var weakRegistry: Registry?
        weak var weakJob: SharedJob<String, Int>?
        do {
            let keeping = Registry(keepsFinished: true)
            weakRegistry = keeping
            let finished = keeping.subscribe("k", progress: nil, completion: { _ in }) { $0.finish(.success(5)) }
            weakJob = finished?.job
        }
        #expect(weakJob == nil, "a finished job is not kept: its outcome is")
        #expect(weakRegistry == nil, "the registry and the outcomes it keeps go with their last user")
    }

    @Test("progress reaches the subscribers that asked for it")
    func progressReachesSubscribers() {
        let registry = Registry()
        let reports = Collector<Int>()
        let subscription = registry.subscribe("e", progress: { received, _ in reports.append(received) }, completion: { _ in }) { _ in }!
        _ = registry.subscribe("e", progress: nil, completion: { _ in }) { _ in }
        _ = registry.subscribe("e", progress: { received, _ in reports.append(received * 10) }, completion: { _ in }) { _ in }
        subscription.job.reportProgress(received: 5, expected: 10)
        #expect(reports.values == [5, 50])
    }

    @Test(
        "a caller's subscription hands back its context once, to whichever of joined and leave comes second, only while the caller still waits"
    )
    func subscriptionHandshake() {
        let registry = Registry()
        let delivered = Collector<String>()
        func subscribe(_ name: String) -> (job: SharedJob<String, Int>, id: Int) {
            registry.subscribe(name, progress: nil, completion: { delivered.append("\(name) \(try! $0.get())") }) { _ in }!
        }
        // Joined, then left: leave hands the context back and the job loses its last subscriber.
        let joinedFirst = JobSubscription<String, Int, String>()
        let first = subscribe("a")
        #expect(joinedFirst.joined(first.job, id: first.id, "a's caller") == nil)
        #expect(joinedFirst.place?.id == first.id)
        #expect(joinedFirst.leave() == "a's caller" && joinedFirst.leave() == nil)
        #expect(joinedFirst.place == nil && registry.count == 0)
        // Left while subscribing: joined leaves the job and hands the context back.
        let leftFirst = JobSubscription<String, Int, String>()
        #expect(leftFirst.leave() == nil)
        let second = subscribe("b")
        #expect(leftFirst.joined(second.job, id: second.id, "b's caller") == "b's caller")
        #expect(leftFirst.place == nil && registry.count == 0)
        // The outcome came first: nothing is handed back, either way round.
        let finished = JobSubscription<String, Int, String>()
        let third = subscribe("c")
        #expect(finished.joined(third.job, id: third.id, "c's caller") == nil)
        third.job.finish(.success(3))
        #expect(finished.leave() == nil)
        let late = JobSubscription<String, Int, String>()
        let fourth = subscribe("d")
        fourth.job.finish(.success(4))
        #expect(late.leave() == nil && late.joined(fourth.job, id: fourth.id, "d's caller") == nil)
        #expect(delivered.values == ["c 3", "d 4"], "a caller that left is not called; one that did not is called once")
    }
}

/// An upstream stage that records which subscribers left it.
private final class RecordingUpstream: SubscribedWork {
    let left: Collector<Int>
    init(_ left: Collector<Int>) { self.left = left }
    func unsubscribe(_ id: Int) -> Bool {
        left.append(id)
        return true
    }
    func setPriority(_ priority: DownloadPriority, of id: Int) {}
}

@Suite("Download queue", .timeLimit(.minutes(5)))
struct DownloadQueueTests {
    private func key(_ id: Int) -> RequestKey {
        RequestKey(DownloadRequest(url: URL(string: "https://example.com/\(id)")!))
    }

    @Test("higher priority first; FIFO or LIFO within a priority; a requeued task keeps its place")
    func order() {
        for order in [DownloadExecutionOrder.fifo, .lifo] {
            var queue = DownloadQueue(executionOrder: order)
            queue.push(id: 1, request: key(1), priority: .normal)
            queue.push(id: 2, request: key(2), priority: .high)
            queue.push(id: 3, request: key(3), priority: .normal)
            queue.push(id: 5, request: key(5), priority: .normal)
            queue.push(id: 4, request: key(4), priority: .normal)  // task 4 queued again
            var popped: [UInt64] = []
            while let entry = queue.pop() { popped.append(entry.id) }
            #expect(popped == (order == .fifo ? [2, 1, 3, 4, 5] : [2, 5, 4, 3, 1]))
            #expect(queue.count == 0)
        }
    }

    @Test("compacting keeps the live entries in order")
    func compact() {
        var queue = DownloadQueue(executionOrder: .fifo)
        for id in 1...200 { queue.push(id: UInt64(id), request: key(id), priority: id % 2 == 0 ? .low : .normal) }
        for _ in 0..<70 { _ = queue.pop() }
        queue.compact { $0.id % 3 != 0 }
        var popped: [UInt64] = []
        while let entry = queue.pop() { popped.append(entry.id) }
        let expected = (1...200).filter { $0 % 2 == 1 }.dropFirst(70) + (1...200).filter { $0 % 2 == 0 }
        #expect(popped == expected.filter { $0 % 3 != 0 }.map(UInt64.init))
    }
}
