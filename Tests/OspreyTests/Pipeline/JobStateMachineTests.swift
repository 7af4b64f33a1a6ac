import Foundation
import Testing

@testable import Osprey

/// The job state machines alone: every transition driven by the test, no lock, no pipeline work.
@Suite("Job state machines", .timeLimit(.minutes(1)))
struct JobStateMachineTests {
    private typealias Machine = SharedJob<String, Int>.StateMachine

    private static func machine() -> Machine {
        Machine(progress: nil, completion: { _ in })
    }

    /// The ids of the subscribers a finish hands out; `nil` for no delivery.
    private static func delivered(_ action: Machine.FinishAction) -> [Int]? {
        guard case .deliver(let subscribers) = action else { return nil }
        return subscribers.map(\.id)
    }

    /// The subscriber id of a subscription step.
    private static func stepID(_ step: PendingStep?) -> Int? {
        guard case .subscription(_, let id) = step else { return nil }
        return id
    }

    private static func step(_ id: Int) -> PendingStep { .subscription(NoUpstream(), id: id) }

    @Test("a new job runs with its first subscriber; later ones wait under new ids")
    func subscribeWhileRunning() {
        var machine = Self.machine()
        #expect(machine.waiting.count == 1)
        let second = machine.subscribe(progress: nil, completion: { _ in })
        let third = machine.subscribe(progress: nil, completion: { _ in })
        #expect(second == SharedJob<String, Int>.firstID + 1 && third == second + 1)
        #expect(machine.waiting.count == 3)
    }

    @Test("finish hands out every subscriber once, in the order they came; a second finish hands out nobody")
    func finishAndDoubleFinish() {
        var machine = Self.machine()
        for _ in 0..<4 { _ = machine.subscribe(progress: nil, completion: { _ in }) }
        let r1 = machine.unsubscribe(3)
        #expect(r1.isLeft)
        let first = Self.delivered(machine.finish())
        #expect(first == [1, 2, 4, 5])
        let r2 = machine.finish()
        #expect(Self.delivered(r2) == nil, "a second outcome is dropped")
        #expect(machine.waiting.count == 0 && machine.progressReceivers == nil)
    }

    @Test("after finish: no subscriber waits, and leaving stops nothing")
    func leaveAfterFinish() {
        var machine = Self.machine()
        _ = machine.finish()
        #expect(machine.waiting.count == 0)
        let r4 = machine.unsubscribe(1)
        #expect(r4.isNone, "leaving a finished job stops nothing")
    }

    @Test("the last subscriber leaving cancels the work and hands back the step; the others do not")
    func cancelOfLastSubscriber() {
        var machine = Self.machine()
        _ = machine.subscribe(progress: nil, completion: { _ in })
        let r5 = machine.setStep(Self.step(10))
        #expect(r5.isNone)
        let r6 = machine.setStep(Self.step(11))
        #expect(r6.isNone, "a new step replaces the one that is done")
        let r7 = machine.unsubscribe(1)
        #expect(r7.isLeft)
        let r8 = machine.unsubscribe(1)
        #expect(r8.isNone, "leaving twice is leaving once")
        let r9 = machine.unsubscribe(99)
        #expect(r9.isNone, "an unknown id is ignored")
        guard case .cancelWork(let step) = machine.unsubscribe(2) else {
            Issue.record("the last subscriber leaving cancels the work")
            return
        }
        #expect(Self.stepID(step) == 11)
        guard case .cancelled = machine.state else {
            Issue.record("an abandoned job is cancelled")
            return
        }
        let r10 = machine.unsubscribe(2)
        #expect(r10.isNone, "a cancelled job is cancelled once")
    }

    @Test("the last subscriber leaving before any step cancels no step")
    func cancelWithoutStep() {
        var machine = Self.machine()
        guard case .cancelWork(let step) = machine.unsubscribe(SharedJob<String, Int>.firstID) else {
            Issue.record("the only subscriber leaving cancels the work")
            return
        }
        #expect(step == nil)
    }

    @Test("after cancel: finish delivers nothing, a new step is stopped at once")
    func finishAfterCancel() {
        var machine = Self.machine()
        _ = machine.unsubscribe(1)
        let r11 = machine.finish()
        #expect(Self.delivered(r11) == nil)
        guard case .cancel(let step) = machine.setStep(Self.step(12)) else {
            Issue.record("a step begun after the cancellation is stopped")
            return
        }
        #expect(Self.stepID(step) == 12)
    }

    @Test("a step set after finish is not the job's to stop")
    func stepAfterFinish() {
        var machine = Self.machine()
        _ = machine.finish()
        let r12 = machine.setStep(Self.step(13))
        #expect(r12.isNone)
    }

    @Test("progress goes to the running job's subscribers that asked for it, first one included")
    func progressReceivers() {
        var machine = Machine(progress: { _, _ in }, completion: { _ in })
        _ = machine.subscribe(progress: nil, completion: { _ in })
        _ = machine.subscribe(progress: { _, _ in }, completion: { _ in })
        let withProgress = machine.progressReceivers?.filter { $0.progress != nil }.map(\.id)
        #expect(withProgress == [1, 3])
    }

    @Test("no progress receivers while no waiting subscriber has a progress handler")
    func noProgressReceivers() {
        var machine = Machine(progress: nil, completion: { _ in })
        #expect(machine.progressReceivers == nil && machine.waiting.count == 1)
        let id = machine.subscribe(progress: { _, _ in }, completion: { _ in })
        #expect(machine.progressReceivers?.count == 2)
        guard case .left = machine.unsubscribe(id) else {
            Issue.record("the subscriber with progress leaves, one remains")
            return
        }
        #expect(machine.progressReceivers == nil && machine.waiting.count == 1)
    }

    @Test("the first subscriber leaving while others wait: the next oldest takes its place, order and priority follow")
    func firstLeavesOthersWait() {
        var machine = Machine(progress: nil, completion: { _ in }, priority: .veryHigh)
        let second = machine.subscribe(progress: nil, completion: { _ in }, priority: .low)
        let third = machine.subscribe(progress: { _, _ in }, completion: { _ in }, priority: .high)
        #expect(machine.priority == .veryHigh)
        #expect(machine.unsubscribe(SharedJob<String, Int>.firstID).isLeft)
        #expect(machine.priority == .high && machine.waiting.count == 2 && machine.progressReceivers != nil)
        #expect(machine.unsubscribe(third).isLeft)
        #expect(machine.priority == .low && machine.progressReceivers == nil)
        let fourth = machine.subscribe(progress: nil, completion: { _ in })
        #expect(Self.delivered(machine.finish()) == [second, fourth])
    }

    @Test("many subscribers: each leaves or is delivered exactly once")
    func manySubscribers() {
        var machine = Self.machine()
        for _ in 0..<1_000 { _ = machine.subscribe(progress: nil, completion: { _ in }) }
        for id in stride(from: 1, through: 1_001, by: 2) {
            let left = machine.unsubscribe(id)
            #expect(left.isLeft)
        }
        let ids = Self.delivered(machine.finish())
        #expect(ids == Array(stride(from: 2, through: 1_000, by: 2)))
    }

    // MARK: - ImageTask

    private typealias TaskMachine = ImageTask.StateMachine

    @Test("a request's task: completes once; a cancel afterwards stops nothing")
    func taskCompletesOnce() {
        var machine = TaskMachine(completed: false, priority: .normal)
        let r13 = machine.setStep(Self.step(1))
        #expect(r13.isNone)
        #expect(!machine.isCompleted && !machine.isCancelled)
        let r14 = machine.markCompleted()
        #expect(r14)
        let r15 = machine.markCompleted()
        #expect(!r15, "the second result is dropped")
        #expect(machine.isCompleted)
        let r16 = machine.cancel()
        #expect(r16.isNone)
        #expect(machine.isCancelled && machine.isCompleted)
        let r17 = machine.markCompleted()
        #expect(!r17)
    }

    @Test("a request's task: cancel hands back the step and the request; then one delivery, the cancellation's or a racing result's")
    func taskCancelThenComplete() throws {
        try withRequest { request in
            var machine = TaskMachine(completed: false, priority: .normal)
            let r18 = machine.attach(request)
            #expect(r18)
            _ = machine.setStep(Self.step(2))
            guard case .cancel(let step, let bound) = machine.cancel() else {
                Issue.record("cancelling a running task stops its step")
                return
            }
            #expect(Self.stepID(step) == 2 && bound === request)
            #expect(machine.isCancelled && !machine.isCompleted)
            let r19 = machine.cancel()
            #expect(r19.isNone, "a second cancel does nothing")
            guard case .cancel(let late) = machine.setStep(Self.step(3)) else {
                Issue.record("a step begun after the cancellation is stopped")
                return
            }
            #expect(Self.stepID(late) == 3)
            let r20 = machine.markCompleted()
            #expect(r20)
            let r21 = machine.markCompleted()
            #expect(!r21)
            #expect(machine.isCompleted)
        }
    }

    @Test("a request's task cancelled before its request is attached: attach refuses, the request delivers its cancellation")
    func taskCancelBeforeAttach() throws {
        try withRequest { request in
            var machine = TaskMachine(completed: false, priority: .normal)
            guard case .cancel(let step, let bound) = machine.cancel() else {
                Issue.record("cancelling a running task is a cancellation")
                return
            }
            #expect(step == nil && bound == nil)
            let r22 = machine.attach(request)
            #expect(!r22)
            let r23 = machine.markCompleted()
            #expect(r23, "the request's own cancellation is its one delivery")
            let r24 = machine.markCompleted()
            #expect(!r24)
        }
    }

    @Test("a memory hit's task is completed from the start")
    func taskCompletedAtStart() {
        var machine = TaskMachine(completed: true, priority: .normal)
        let r25 = machine.markCompleted()
        #expect(machine.isCompleted && !r25)
    }

    /// A request to attach (never started): a pipeline over a cache in a fresh directory.
    private func withRequest(_ body: (PipelineRequest) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-machine-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ImageCache(name: "machine", diskConfig: DiskStorage.Config(name: "machine", directory: directory))
        let pipeline = ImagePipeline(cache: cache)
        var resolved: ResolvedRequest?
        _ = pipeline.resolve(.url(URL(string: "https://example.com/a.png")!), items: [.cachePolicy(.reload)], miss: &resolved)
        let request = PipelineRequest(
            pipeline: pipeline, request: try #require(resolved), task: ImageTask(completed: false), progress: nil,
            refresh: nil, callbackQueue: .immediate, completion: { _ in })
        try body(request)
    }
}

/// Upstream work that nothing is waiting on: the machines never call it.
private final class NoUpstream: SubscribedWork {
    func unsubscribe(_ id: Int) -> Bool {
        Issue.record("a state machine performs no action itself")
        return false
    }
    func setPriority(_ priority: DownloadPriority, of id: Int) {
        Issue.record("a state machine performs no action itself")
    }
}

extension SharedJob.StateMachine.UnsubscribeAction {
    var isNone: Bool { if case .none = self { true } else { false } }
    var isLeft: Bool { if case .left = self { true } else { false } }
}

extension SharedJob.StateMachine.SetStepAction {
    var isNone: Bool { if case .none = self { true } else { false } }
}

extension ImageTask.StateMachine.SetStepAction {
    var isNone: Bool { if case .none = self { true } else { false } }
}

extension ImageTask.StateMachine.CancelAction {
    var isNone: Bool { if case .none = self { true } else { false } }
}
