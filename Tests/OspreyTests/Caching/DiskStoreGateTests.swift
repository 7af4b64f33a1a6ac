import Dispatch
import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// Stores on the caller's thread, and their order against the disk storage's exclusive work.
@Suite("DiskStorage store gate", .timeLimit(.minutes(2)))
struct DiskStoreGateTests {
    func open(_ dir: borrowing TemporaryDirectory) async -> DiskStorage.Backend {
        let storage = DiskStorage.Backend(config: .init(directory: dir.url.appendingPathComponent("c"), now: TestClock().function))
        await storage.waitForPendingWork()
        return storage
    }

    @Test func storesRunInlineUntilABarrierIsSubmitted() {
        var gate = DiskStoreGate()
        #expect(gate.storeArrives() == .runInline)
        #expect(gate.storeArrives() == .runInline)
        gate.barrierSubmitted()
        #expect(gate.storeArrives() == .enqueue)
        #expect(gate.barrierStarts() == .waitForInlineStores)
        #expect(gate.inlineStoreFinished() == false)
        // The last inline store wakes the barrier; stores stay queued until it has finished.
        #expect(gate.inlineStoreFinished() == true)
        gate.barrierResumed()
        #expect(gate.storeArrives() == .enqueue)
        gate.barrierFinished()
        #expect(gate.storeArrives() == .runInline)
        #expect(gate.inlineStoreFinished() == false)
    }

    @Test func pendingBarriersKeepStoresQueuedAndRunAtOnceWithNoInlineStore() {
        var gate = DiskStoreGate()
        gate.barrierSubmitted()
        gate.barrierSubmitted()
        #expect(gate.barrierStarts() == .run)
        gate.barrierFinished()
        #expect(gate.storeArrives() == .enqueue)
        #expect(gate.barrierStarts() == .run)
        gate.barrierFinished()
        #expect(gate.storeArrives() == .runInline)
        #expect(gate.inlineStoreFinished() == false)
        #expect(gate.inlineStores == 0 && gate.barriers == 0)
    }

    @Test func aStoreRunsOnTheCallersThreadNotTheQueue() async throws {
        let dir = TemporaryDirectory()
        let storage = await open(dir)
        // The queue is held by work the gate does not know of: a store queued there would wait
        // for it (until the bounded wait below gives up); one run inline completes first.
        let release = DispatchSemaphore(value: 0)
        let releasedByStore = SharedLocked<Bool?>(nil)
        storage.queue.async(flags: .barrier) {
            let result = release.wait(timeout: .now() + 60)
            releasedByStore.withLock { $0 = result == .success }
        }
        try await storage.store(Data([1, 2, 3]), forKey: "k")
        release.signal()
        await storage.waitForPendingWork()
        #expect(releasedByStore.withLock { $0 } == true)
        #expect(await storage.value(forKey: "k") == Data([1, 2, 3]))
    }

    @Test func exclusiveWorkWaitsForTheStoresAlreadyRunning() async throws {
        let dir = TemporaryDirectory()
        let storage = await open(dir)
        // Holding the key's lock keeps an inline store of it running.
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? storage.withKeyLock(DiskStorage.Backend.hash("k")) { () throws(OspreyError) in
                held.signal()
                _ = release.wait(timeout: .now() + 60)
            }
        }
        try await withDeadline("the key lock to be held") {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    held.wait()
                    continuation.resume()
                }
            }
        }
        let store = Task { try await storage.store(Data([7]), forKey: "k") }
        try await eventually("one inline store") { storage.gate.withLock { $0.inlineStores } == 1 }
        let removal = Task { try await storage.removeAll() }
        try await eventually("the barrier to wait") { storage.gate.withLock { $0.barrierWaiting } }
        release.signal()
        try await store.value("the store")
        try await removal.value("removeAll")
        // removeAll ran after the store that was running when it was called, not beside it.
        #expect(await storage.value(forKey: "k") == nil)
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "k").path))
        try await storage.store(Data([8]), forKey: "k")
        #expect(await storage.value(forKey: "k") == Data([8]))
        #expect(storage.gate.withLock { $0.inlineStores == 0 && $0.barriers == 0 })
    }
}
