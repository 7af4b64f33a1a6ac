import Foundation
import Synchronization
import Testing

@testable import Osprey

#if canImport(Glibc)
    import Glibc
#endif

/// ``ImagePipeline/Configuration/processingThreadNice``: decoding and processing run on the
/// pipeline's own threads at that nice value, below the caller's; the caller's thread keeps its own.
@Suite("Processing threads at a lower priority", .timeLimit(.minutes(2)))
struct ProcessingThreadNiceTests {
    /// The nice value of the calling thread (on Linux a thread's own).
    static func currentNice() -> Int32 {
        #if os(Linux)
            getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #else
            getpriority(PRIO_PROCESS, 0)
        #endif
    }

    /// The nice value and name of the thread each step ran on.
    final class Trace: StepRecorder {
        private let recorded = Mutex<[(step: String, nice: Int32, thread: String)]>([])
        func record(_ step: String) {
            let entry = (step, ProcessingThreadNiceTests.currentNice(), Thread.current.name ?? "")
            recorded.withLock { $0.append(entry) }
        }
        var steps: [(step: String, nice: Int32, thread: String)] { recorded.withLock { $0 } }
    }

    @Test("decodes and processors run on the pipeline's threads at its nice value; the caller's thread is not lowered")
    func lowered() async throws {
        #if os(Linux)
            let before = Self.currentNice()
            let nice = min(19, before + 5)
            let trace = Trace()
            let directory = TemporaryDirectory("nice")
            let url = directory.url
            try await withLoopback { server, loader in
                let cache = ImageCache(name: "nice", diskConfig: DiskStorage.Config(name: "nice", directory: url))
                let pipeline = ImagePipeline(
                    configuration: .init(
                        cache: cache, downloader: makeDownloader(loader), decoder: RecordingDecoder(trace: trace), processingThreadNice: nice))
                for index in 0..<4 {
                    _ = try await pipeline.image(
                        for: .url(server.url("/image/nice-\(index)")),
                        options: [.processor(RecordingProcessor(trace: trace)), .cacheWrites(.beforeDelivery)])
                }
                await cache.diskStorage.waitForPendingWork()
            }
            let steps = trace.steps
            #expect(steps.count == 8, "a decode and a processor per image: \(steps)")
            #expect(steps.allSatisfy { $0.nice == nice }, "every step at nice \(nice): \(steps)")
            // The nice value, not the thread name, tells the pool's threads apart: a name longer than
            // Linux's 15 characters is not applied to the kernel thread, which keeps its creator's.
            #expect(Self.currentNice() == before, "the calling thread keeps its priority")
        #endif
    }

    @Test("the default configuration takes defaultProcessingThreadNice (nil unless set)")
    func defaultValue() {
        #expect(ImagePipeline.Configuration.defaultProcessingThreadNice == nil)
        #expect(ImagePipeline.Configuration().processingThreadNice == nil)
    }
}
