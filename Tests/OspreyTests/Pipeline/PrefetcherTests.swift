import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Prefetcher", .timeLimit(.minutes(5)))
struct PrefetcherTests {
    @Test("counts completed, skipped and failed sources; runs at most the concurrency limit at once")
    func counts() async throws {
        try await PipelineFixture.run { f in
            _ = try await f.pipeline.image(for: f.source("/image/pre/0"), options: [.waitForCache])
            _ = try await f.pipeline.image(for: f.source("/image/pre/1"), options: [.waitForCache])
            f.cache.clearMemoryCache()
            _ = try await f.pipeline.image(for: f.source("/image/pre/1"))
            let sources = (0..<8).map { f.source("/image/pre/\($0)") } + [f.source("/status/404")]
            let progress = Collector<Int>()
            let prefetcher = ImagePrefetcher(sources: sources, pipeline: f.pipeline, maxConcurrentRequests: 2)
            let report = await prefetcher.run { report, _, _, _ in progress.append(report.finishedCount) }
            #expect(report.completed.count == 6)
            #expect(report.skipped.count == 2, "one in memory, one on disk")
            #expect(report.failed.count == 1)
            #expect(progress.values == Array(1...9))
            #expect(f.server.snapshot.maxInFlight <= 2)
            #expect(f.server.snapshot.headers["/image/pre/5"] != nil)
        }
    }

    @Test("disk hits can be promoted into memory")
    func promotion() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/promote")
            _ = try await f.pipeline.image(for: source, options: [.waitForCache])
            f.cache.clearMemoryCache()
            let report = await ImagePrefetcher(sources: [source], pipeline: f.pipeline, promotesDiskHitsToMemory: true).run()
            #expect(report.completed.count == 1)
            #expect(f.pipeline.cachedType(for: source) == .memory)
        }
    }

    @Test("stop cancels what is running and skips the rest")
    func stop() async throws {
        try await PipelineFixture.run { f in
            let sources = (0..<6).map { f.source("/gated/stop/\($0)") }
            let prefetcher = ImagePrefetcher(sources: sources, pipeline: f.pipeline, maxConcurrentRequests: 2)
            let run = Task { await prefetcher.run() }
            _ = await f.server.waitUntil { $0.inFlight == 2 }
            prefetcher.stop()
            let report = try await run.value("the stopped prefetcher's report")
            #expect(report.completed.isEmpty)
            #expect(report.skipped.count == 6)
            f.server.openGate("stop")
        }
    }
}
