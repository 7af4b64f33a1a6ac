import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// `ImagePipeline.imageTask(for:)` and its one events stream (progress and previews are in
/// ProgressivePreviewTests and SharedWorkTests): a hit, a typed failure, cancelling through the
/// reading task, and a target's task, whose stream ends at once.
@Suite("Image task events", .timeLimit(.minutes(2)))
struct ImageTaskEventsTests {
    /// The results of a task's events, in order.
    static func results(_ task: ImageTask) async -> [Result<ImageResult, OspreyError>] {
        var results: [Result<ImageResult, OspreyError>] = []
        for await event in task.events {
            if case .finished(let result) = event { results.append(result) }
        }
        return results
    }

    @Test("a miss ends with its result; a memory hit is a finished task whose stream is its result alone")
    func missThenHit() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/task-events")
            let miss = await Self.results(f.pipeline.imageTask(for: source))
            #expect(miss.count == 1 && (try? miss[0].get().cacheType) == CacheType.none)
            let hitTask = f.pipeline.imageTask(for: source)
            #expect(hitTask.isCompleted)
            let hit = await Self.results(hitTask)
            #expect(hit.count == 1 && (try? hit[0].get().cacheType) == .memory)
            #expect(f.server.hits("/image/task-events") == 1)
        }
    }

    @Test("a 404 finishes with the typed download error, not a thrown one")
    func typedFailure() async throws {
        try await PipelineFixture.run { f in
            let results = await Self.results(f.pipeline.imageTask(for: f.source("/status/404")))
            var isNotFound = false
            if results.count == 1, case .failure(.download(.invalidStatusCode(404, _))) = results[0] { isNotFound = true }
            #expect(isNotFound, "one 404 failure, got \(results)")
        }
    }

    @Test("cancelling the Swift task that reads the events cancels the request; the download it alone wanted stops")
    func cancellingTheReaderCancels() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try ProgressivePreviewTests.pacedBody()
            f.server.setBody("cancel-events", data, cuts: cuts)
            let task = f.pipeline.imageTask(for: f.source("/paced/cancel-events/a"))
            let progressed = Collector<Bool>()
            let reader = Task {
                for await event in task.events {
                    if case .progress = event, progressed.values.isEmpty { progressed.append(true) }
                }
            }
            f.server.openGate("cancel-events-0")
            #expect(await progressed.wait(for: 1) == [true])
            reader.cancel()
            try await eventually("the task to be cancelled") { task.isCancelled }
            try await eventually("the paced download to be aborted") {
                f.server.snapshot.aborted.contains { $0.hasPrefix("/paced/cancel-events") }
            }
            await reader.value
        }
    }

    @Test("the stream's end calling back into the sender (a reader's cancellation) is queued: events in order, the end last")
    func senderFeedsOutsideItsLock() async throws {
        // A reader cancelled while the sender yields to it runs the stream's termination (cancel,
        // then the cancelled result, sent here) under the reading task's status lock, which that
        // yield waits for: a sender holding its own lock across the yield deadlocks (seen in CI,
        // rarely). Deterministic here on one thread: the termination runs inside the sender's own
        // finish() and sends again; with the lock held across finish() that second send would wait
        // for itself. Queued instead, and dropped, for the stream has ended.
        let (stream, continuation) = AsyncStream<ImageTask.Event>.makeStream()
        let sender = ImageTask.EventSender(continuation)
        continuation.onTermination = { _ in
            sender.report(.progress(received: 9, expected: nil))
            sender.complete(.finished(.failure(.pipeline(.cancelled(source: "test")))), last: true)
        }
        sender.report(.progress(received: 1, expected: 2))
        sender.complete(.finished(.failure(.pipeline(.cancelled(source: "test")))), last: true)
        sender.report(.progress(received: 2, expected: 2))
        var kinds: [String] = []
        for await event in stream {
            switch event {
            case .progress(let received, _): kinds.append("progress \(received)")
            case .preview: kinds.append("preview")
            case .finished: kinds.append("finished")
            }
        }
        #expect(kinds == ["progress 1", "finished"])
    }

    @Test("a target's task reports through the target's callbacks: its events stream ends at once")
    func targetTaskHasNoEvents() async throws {
        try await PipelineFixture.run { f in try await Self.targetTaskHasNoEvents(f) }
    }

    @MainActor
    private static func targetTaskHasNoEvents(_ f: PipelineFixture) async throws {
        let widget = TestWidget()
        let done = Collector<Bool>()
        let task = widget.osprey.setImage(
            with: f.source("/image/target-events"), pipeline: f.pipeline, completion: { done.append((try? $0.get()) != nil) })
        var events = 0
        for await _ in try #require(task).events { events += 1 }
        #expect(events == 0)
        #expect(await done.wait(for: 1) == [true])
    }
}
