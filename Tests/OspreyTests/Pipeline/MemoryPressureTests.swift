import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// ``ImagePipeline/handleMemoryPressure(_:)``: the memory cache trimmed by level, read back from
/// its cost, and prefetching paused until the level is normal again.
@Suite("Memory pressure: the memory cache sheds by level, prefetching pauses", .timeLimit(.minutes(3)))
struct MemoryPressureTests {
    @Test("a warning keeps a quarter of the memory cache's cost; critical empties it")
    func trims() async throws {
        try await PipelineFixture.run { f in
            for index in 0..<8 {
                _ = try await f.pipeline.image(for: f.source("/image/pressure/\(index)"))
            }
            let memory = f.cache.memoryStorage
            let full = memory.totalCost
            #expect(memory.count == 8 && full > 0)
            f.pipeline.handleMemoryPressure(.warning)
            #expect(f.pipeline.memoryPressure == .warning)
            #expect(memory.totalCost <= Int(Double(full) * ImagePipeline.warningCacheFraction))
            #expect(memory.count > 0 && memory.count < 8, "the most recently used stay: \(memory.count)")
            // The last image used is one of them.
            #expect(f.pipeline.cachedType(for: f.source("/image/pressure/7")) == .memory)
            f.pipeline.handleMemoryPressure(.critical)
            #expect(memory.totalCost == 0 && memory.count == 0)
            f.pipeline.handleMemoryPressure(.normal)
            _ = try await f.pipeline.image(for: f.source("/image/pressure/0"))
            #expect(memory.count == 1, "the cache refills as it is used")
        }
    }

    @Test("prefetching pauses under pressure and resumes at normal")
    func pausesPrefetching() async throws {
        try await PipelineFixture.run { f in
            let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maxConcurrentRequests: 2)
            f.pipeline.handleMemoryPressure(.warning)
            let sources = (0..<3).map { f.source("/image/paused/\($0)") }
            let run = Task { await prefetcher.prefetch(sources) }
            try await eventually("the sources are queued") { prefetcher.isPrefetching }
            // Queued, none started: no request reached the server.
            #expect((0..<3).allSatisfy { f.server.hits("/image/paused/\($0)") == 0 })
            f.pipeline.handleMemoryPressure(.critical)
            #expect(prefetcher.isPrefetching && f.server.hits("/image/paused/0") == 0)
            f.pipeline.handleMemoryPressure(.normal)
            let report = try await run.value("the resumed prefetch's report")
            #expect(report.completed.count == 3)
            #expect((0..<3).allSatisfy { f.server.hits("/image/paused/\($0)") == 1 })
        }
    }
}
