import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Pipeline: a shared fetch downloads at the highest priority of its requests", .timeLimit(.minutes(2)))
struct FetchPriorityTests {
    @Test("a request of higher priority joining a queued fetch moves its download up the queue")
    func joinRaisesDownload() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-priority-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let cache = ImageCache(name: "priority", diskConfig: DiskStorage.Config(name: "priority", directory: directory))
            let pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: downloader))
            // One slot, held by a gated download.
            let blocker = Collector<DownloadOutcome>()
            downloader.download(server.url("/gated/prio/blocker")) { blocker.append($0) }
            #expect(await server.waitUntil { $0.hits["/gated/prio/blocker"] == 1 })
            let a = server.url("/image/prio-a"), b = server.url("/image/prio-b")
            let first = Task { try await pipeline.image(for: .url(a), options: [.downloadPriority(.normal)]) }
            try await eventually("1 queued download") { downloader.queuedCount == 1 }
            let low = Task { try await pipeline.image(for: .url(b), options: [.downloadPriority(.low)]) }
            // Another processor: its own delivery, the same fetch; it raises b above a.
            let urgent = Task {
                try await pipeline.image(
                    for: .url(b), options: [.downloadPriority(.veryHigh), .processor(ImageProcessors.Grayscale())])
            }
            let bKey: (HashedKey<FetchJobKey>) -> Bool = { ($0.key.url ?? $0.key.cacheKey) == b.absoluteString }
            try await eventually("2 requests on the fetch of b") { pipeline.fetchJobs.waitingCount(where: bKey) == 2 }
            try await eventually("2 queued downloads") { downloader.queuedCount == 2 }
            server.openGate("prio")
            _ = await blocker.wait(for: 1)
            _ = try await [first.value("the first request"), low.value("the low-priority request"), urgent.value("the urgent request")]
            let log = server.snapshot.log
            let order = log.filter { $0.hasPrefix("/image/prio-") }
            #expect(order == ["/image/prio-b", "/image/prio-a"])
            await cache.diskStorage.waitForPendingWork()
        }
    }
}
