import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Pipeline: a shared fetch downloads at the highest priority of its requests; a task's priority can change", .timeLimit(.minutes(2)))
struct FetchPriorityTests {
    @Test("a request of higher priority joining a queued fetch moves its download up the queue")
    func joinRaisesDownload() async throws {
        let order = try await order(gate: "prio", downloads: 2) { pipeline, server, done in
            ["/image/prio-a", "/image/prio-b"].map { path in
                pipeline.loadImage(with: .url(server.url(path)), options: [.downloadPriority(path.hasSuffix("a") ? .normal : .low)]) {
                    done.append((try? $0.get()) != nil)
                }
            }
        } change: { pipeline, server, done, _ in
            // Another processor: its own delivery, the same queued fetch; it raises b above a.
            let b = server.url("/image/prio-b")
            let urgent = pipeline.loadImage(with: .url(b), options: [.downloadPriority(.veryHigh), .processor(ImageProcessors.Grayscale())]) {
                done.append((try? $0.get()) != nil)
            }
            try await eventually("2 requests on the fetch of b") {
                pipeline.fetchJobs.waitingCount(where: { ($0.key.url ?? $0.key.cacheKey) == b.absoluteString }) == 2
            }
            return [urgent]
        }
        #expect(order == ["/image/prio-b", "/image/prio-a"])
    }

    /// One download slot held by a gated download; `queue` starts the requests (queueing
    /// `downloads` downloads in all), `change` runs once they are queued (and may start more
    /// requests, returned), then the slot opens: the order in which the `/image/` paths were
    /// downloaded.
    private func order(
        gate: String, downloads: Int, queue: (ImagePipeline, LoopbackOrigin, Collector<Bool>) -> [ImageTask],
        change: (ImagePipeline, LoopbackOrigin, Collector<Bool>, [ImageTask]) async throws -> [ImageTask]
    ) async throws -> [String] {
        var order: [String] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-priority-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let cache = ImageCache(name: "priority", diskConfig: DiskStorage.Config(name: "priority", directory: directory))
            let pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: downloader))
            let blocker = Collector<DownloadOutcome>()
            downloader.download(server.url("/gated/\(gate)/blocker")) { blocker.append($0) }
            #expect(await server.waitUntil { $0.hits["/gated/\(gate)/blocker"] == 1 })
            let done = Collector<Bool>()
            let tasks = queue(pipeline, server, done)
            try await eventually("\(downloads) queued downloads") { downloader.queuedCount == downloads }
            let more = try await change(pipeline, server, done, tasks)
            server.openGate(gate)
            _ = await blocker.wait(for: 1)
            #expect(await done.wait(for: tasks.count + more.count).allSatisfy { $0 })
            order = server.snapshot.log.filter { $0.hasPrefix("/image/") }
            await cache.diskStorage.waitForPendingWork()
        }
        return order
    }

    @Test("raising a task's priority moves its queued download up: the last queued, raised to very high, downloads first")
    func raisingMovesUp() async throws {
        let order = try await order(gate: "raise", downloads: 2) { pipeline, server, done in
            ["/image/raise-a", "/image/raise-b"].map { path in
                pipeline.loadImage(with: .url(server.url(path)), options: [.downloadPriority(.low)]) { done.append((try? $0.get()) != nil) }
            }
        } change: { _, _, _, tasks in
            #expect(tasks[1].priority == .low)
            tasks[1].priority = .veryHigh
            #expect(tasks[1].priority == .veryHigh)
            return []
        }
        #expect(order == ["/image/raise-b", "/image/raise-a"])
    }

    @Test("a shared fetch keeps the highest priority of its tasks: lowering one of two keeps it, lowering both lets the other URL go first")
    func loweringKeepsTheMax() async throws {
        // Two tasks on c (two processors, one fetch) at high, one on d at normal.
        let queue: (ImagePipeline, LoopbackOrigin, Collector<Bool>) -> [ImageTask] = { pipeline, server, done in
            let c = server.url("/image/lower-c"), d = server.url("/image/lower-d")
            return [
                pipeline.loadImage(with: .url(c), options: [.downloadPriority(.high)]) { done.append((try? $0.get()) != nil) },
                pipeline.loadImage(with: .url(c), options: [.downloadPriority(.high), .processor(ImageProcessors.Grayscale())]) {
                    done.append((try? $0.get()) != nil)
                },
                pipeline.loadImage(with: .url(d), options: [.downloadPriority(.normal)]) { done.append((try? $0.get()) != nil) }
            ]
        }
        let one = try await order(gate: "lower1", downloads: 2, queue: queue) { _, _, _, tasks in
            tasks[0].priority = .veryLow
            return []
        }
        #expect(one == ["/image/lower-c", "/image/lower-d"], "the other task on c still wants it at high")
        let both = try await order(gate: "lower2", downloads: 2, queue: queue) { _, _, _, tasks in
            tasks[0].priority = .veryLow
            tasks[1].priority = .low
            return []
        }
        #expect(both == ["/image/lower-d", "/image/lower-c"], "no task wants c above low any more")
    }
}
