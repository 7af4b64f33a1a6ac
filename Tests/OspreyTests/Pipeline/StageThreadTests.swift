import Dispatch
import Foundation
import OspreyTestSupport
import Synchronization
import Testing

@testable import Osprey

#if canImport(Glibc)
    import Glibc
#endif

/// Where a miss's steps run: on the processing queue, one after another on one thread once the
/// bytes are there; a step reached from another thread is queued, never run on the caller's.
@Suite("Pipeline stages on the processing queue", .timeLimit(.minutes(2)))
struct StageThreadTests {
    /// Each step's name, thread, and whether it ran on the test's processing queue.
    final class Trace: StepRecorder {
        struct Step: Sendable {
            var name: String
            var thread: UInt
            var onQueue: Bool
        }

        let queue = DispatchQueue(label: "osprey.tests.processing", attributes: .concurrent)
        private let marker = DispatchSpecificKey<Int>()
        private let recorded = Mutex<[Step]>([])

        init() { queue.setSpecific(key: marker, value: 1) }

        func record(_ name: String) {
            let step = Step(name: name, thread: UInt(pthread_self()), onQueue: DispatchQueue.getSpecific(key: marker) == 1)
            recorded.withLock { $0.append(step) }
        }

        var steps: [Step] { recorded.withLock { $0 } }
    }

    struct RecordingSerializer: CacheSerializer {
        let trace: Trace
        func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data {
            trace.record("serialize")
            return try DefaultCacheSerializer().data(with: image, original: original, processorIdentifier: processorIdentifier)
        }
        func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
            try DefaultCacheSerializer().image(with: data, options: options)
        }
    }

    private func withPipeline(_ trace: Trace, _ body: (ImagePipeline, ImageCache, LoopbackOrigin) async throws -> Void) async throws {
        let directory = TemporaryDirectory("stages")
        let url = directory.url
        try await withLoopback { server, loader in
            let cache = ImageCache(name: "stages", diskConfig: DiskStorage.Config(name: "stages", directory: url))
            let pipeline = ImagePipeline(
                configuration: .init(
                    cache: cache, downloader: makeDownloader(loader), processingQueue: trace.queue, decoder: RecordingDecoder(trace: trace)))
            try await body(pipeline, cache, server)
            await cache.diskStorage.waitForPendingWork()
        }
    }

    @Test("after the download: original write, decode, processors and cache write on one processing thread")
    func oneThreadAfterDownload() async throws {
        let trace = Trace()
        try await withPipeline(trace) { pipeline, cache, server in
            let processor = ImageProcessors.Composition([RecordingProcessor(name: "a", trace: trace), RecordingProcessor(name: "b", trace: trace)])
            let result = try await pipeline.image(
                for: .url(server.url("/image/stages")),
                options: [
                    .processor(processor), .originalStorage(.disk), .cacheWrites(.beforeDelivery), .cacheSerializer(RecordingSerializer(trace: trace))
                ])
            #expect(result.cacheType == .none)
            let steps = trace.steps
            #expect(steps.map(\.name) == ["decode", "a", "b", "serialize"])
            #expect(steps.allSatisfy { $0.onQueue })
            #expect(Set(steps.map(\.thread)).count == 1, "each step went on in place: \(steps)")
            let key = server.url("/image/stages").absoluteString
            #expect(cache.diskStorage.isCached(forKey: key), "the original was written before the job finished")
            #expect(cache.diskStorage.isCached(forKey: ImageCache.computedKey(key, processorIdentifier: processor.identifier)))
        }
    }

    @Test("a processor over an original from memory is queued, not run on the caller's thread")
    func fromMemoryIsQueued() async throws {
        let trace = Trace()
        try await withPipeline(trace) { pipeline, _, server in
            let source = ImageSource.url(server.url("/image/memory"))
            _ = try await pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            #expect(trace.steps.map(\.name) == ["decode"])
            let result = try await pipeline.image(
                for: source,
                options: [
                    .processor(RecordingProcessor(name: "a", trace: trace)), .cacheWrites(.beforeDelivery),
                    .cacheSerializer(RecordingSerializer(trace: trace))
                ]
            )
            #expect(result.cacheType == .memory, "the original came from memory")
            let steps = trace.steps.dropFirst()
            #expect(steps.map(\.name) == ["a", "serialize"])
            #expect(steps.allSatisfy { $0.onQueue })
            #expect(server.hits("/image/memory") == 1)
        }
    }
}

@Suite("Disk stores with a completion", .timeLimit(.minutes(2)))
struct DiskStoreCompletionTests {
    @Test("a store with a completion runs on the caller's thread, or after a pending barrier")
    func storeWithCompletion() async throws {
        let directory = TemporaryDirectory("store-done")
        let storage = DiskStorage.Backend(config: .init(directory: directory.url.appendingPathComponent("c")))
        await storage.waitForPendingWork()

        let doneNow = Atomic<Bool>(false)
        storage.store(Data("now".utf8), forKey: "now", expiration: nil, meta: Data()) { result in
            doneNow.store((try? result.get()) != nil, ordering: .relaxed)
        }
        let reportedAtOnce = doneNow.load(ordering: .relaxed)
        #expect(reportedAtOnce, "no barrier pending: stored and reported before returning")

        let release = DispatchSemaphore(value: 0)
        storage.submitBarrier { _ = release.wait(timeout: .now() + 10) }
        let stored = DispatchSemaphore(value: 0)
        let doneLater = Atomic<Bool>(false)
        storage.store(Data("later".utf8), forKey: "later", expiration: nil, meta: Data()) { result in
            doneLater.store((try? result.get()) != nil, ordering: .relaxed)
            stored.signal()
        }
        let reportedEarly = doneLater.load(ordering: .relaxed)
        #expect(!reportedEarly, "the store waits behind the barrier")
        #expect(!storage.isCached(forKey: "later"))
        release.signal()
        #expect(stored.wait(timeout: .now() + 10) == .success)
        let reported = doneLater.load(ordering: .relaxed)
        #expect(reported)
        #expect(await storage.value(forKey: "later") == Data("later".utf8))
        #expect(await storage.value(forKey: "now") == Data("now".utf8))
    }
}
