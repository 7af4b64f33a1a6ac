import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Prefetcher", .timeLimit(.minutes(5)))
struct PrefetcherTests {
    @Test("counts completed, skipped and failed sources; runs at most the concurrency limit at once")
    func counts() async throws {
        try await PipelineFixture.run { f in
            _ = try await f.pipeline.image(for: f.source("/image/pre/0"), options: [.cacheWrites(.beforeDelivery)])
            _ = try await f.pipeline.image(for: f.source("/image/pre/1"), options: [.cacheWrites(.beforeDelivery)])
            f.cache.clearMemoryCache()
            _ = try await f.pipeline.image(for: f.source("/image/pre/1"))
            let sources = (0..<8).map { f.source("/image/pre/\($0)") } + [f.source("/status/404")]
            let progress = Collector<Int>()
            let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maxConcurrentRequests: 2)
            let report = await prefetcher.prefetch(sources) { report, _, _, _ in progress.append(report.finishedCount) }
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
            _ = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            f.cache.clearMemoryCache()
            let report = await ImagePrefetcher(pipeline: f.pipeline, promotesDiskHitsToMemory: true).prefetch([source])
            #expect(report.completed.count == 1)
            #expect(f.pipeline.cachedType(for: source) == .memory)
        }
    }

    @Test("stopping everything cancels what is running and skips the rest")
    func stop() async throws {
        try await PipelineFixture.run { f in
            let sources = (0..<6).map { f.source("/gated/stop/\($0)") }
            let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maxConcurrentRequests: 2)
            let run = Task { await prefetcher.prefetch(sources) }
            _ = await f.server.waitUntil { $0.inFlight == 2 }
            prefetcher.stopPrefetching()
            let report = try await run.value("the stopped prefetcher's report")
            #expect(report.completed.isEmpty)
            #expect(report.skipped.count == 6)
            f.server.openGate("stop")
        }
    }

    @Test("start and stop as a list scrolls: stopping takes back only its sources, and cancels only what no one else wants")
    func startAndStop() async throws {
        try await PipelineFixture.run { f in
            let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maxConcurrentRequests: 2)
            let wanted = f.source("/gated/scroll/wanted"), dropped = f.source("/gated/scroll/dropped")
            let queued = f.source("/gated/scroll/queued"), kept = f.source("/image/scroll-kept")
            prefetcher.startPrefetching(with: [wanted, dropped, queued])
            prefetcher.startPrefetching(with: [wanted])  // queued already: nothing more
            _ = await f.server.waitUntil { $0.inFlight == 2 }
            // A widget wants the first image too: its request shares the prefetch's download.
            let widget = Task { try await f.pipeline.image(for: wanted) }
            try await eventually("the widget's request on the shared download") {
                f.pipeline.deliverJobs.waitingCount(where: { ($0.key.fetch.key.url ?? $0.key.fetch.key.cacheKey).hasSuffix("/wanted") })
                    == 2
            }
            prefetcher.stopPrefetching(with: [wanted, dropped, queued])
            #expect(await f.server.waitUntil { $0.aborted.contains("/gated/scroll/dropped") }, "no one else wanted it: its download is cancelled")
            prefetcher.startPrefetching(with: [kept])
            #expect(await f.server.waitUntil { $0.hits["/image/scroll-kept", default: 0] == 1 }, "a later start runs")
            f.server.openGate("scroll")
            let image = try await widget.value("the widget's request")
            #expect(image.image.width == 128, "the shared download went on for the widget")
            #expect(f.server.hits("/gated/scroll/wanted") == 1)
            #expect(f.server.hits("/gated/scroll/queued") == 0, "a stopped source that had not started never starts")
            #expect(!f.server.snapshot.aborted.contains("/gated/scroll/wanted"))
        }
    }
}
