import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Downloader scheduling", .timeLimit(.minutes(5)))
struct DownloaderSchedulingTests {
    /// Occupies the only slot with a gated download and returns its collector.
    private func block(_ downloader: ImageDownloader, _ server: LoopbackOrigin, gate: String) async -> Collector<DownloadOutcome> {
        let blocker = Collector<DownloadOutcome>()
        downloader.download(server.url("/gated/\(gate)/blocker")) { blocker.append($0) }
        #expect(await server.waitUntil { $0.hits["/gated/\(gate)/blocker"] == 1 })
        return blocker
    }

    /// The URIs the server saw after the blocker, in order.
    private func order(_ server: LoopbackOrigin, gate: String) -> [String] {
        let log = server.snapshot.log
        guard let index = log.firstIndex(of: "/gated/\(gate)/blocker") else { return [] }
        return Array(log[(index + 1)...])
    }

    @Test("the server never sees more than the concurrency limit")
    func concurrencyLimit() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 3 }
            let results = Collector<DownloadOutcome>()
            for index in 0..<10 {
                downloader.download(server.url("/gated/limit/\(index)")) { results.append($0) }
            }
            #expect(await server.waitUntil { $0.inFlight == 3 })
            #expect(downloader.runningCount == 3)
            #expect(downloader.queuedCount == 7)
            server.openGate("limit")
            let outcomes = await results.wait(for: 10)
            #expect(outcomes.allSatisfy { $0.value?.data == server.image })
            #expect(server.snapshot.maxInFlight == 3)
            #expect(server.snapshot.hits.count == 10)
        }
    }

    @Test("cancelling a running download frees its slot: the queued tasks still run")
    func cancelRunningThenQueued() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let first = await block(downloader, server, gate: "never")
            let rest = Collector<DownloadOutcome>()
            for index in 0..<5 {
                downloader.download(server.url("/image/after/\(index)")) { rest.append($0) }
            }
            #expect(downloader.queuedCount == 5)
            // The worker running the gated download is stopped; a fresh one takes the queue.
            downloader.cancel(url: server.url("/gated/never/blocker"))
            #expect(await first.wait(for: 1).first?.downloadReason?.isCancelled == true)
            let outcomes = await rest.wait(for: 5)
            #expect(outcomes.allSatisfy { $0.value?.data == server.image })
            #expect((0..<5).allSatisfy { server.hits("/image/after/\($0)") == 1 })
            #expect(downloader.runningCount == 0 && downloader.queuedCount == 0)
        }
    }

    @Test("the default limit is 6")
    func defaultLimit() async throws {
        #expect(ImageDownloader.Configuration().maximumConcurrentDownloads == 6)
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let results = Collector<DownloadOutcome>()
            for index in 0..<8 {
                downloader.download(server.url("/gated/six/\(index)")) { results.append($0) }
            }
            #expect(await server.waitUntil { $0.inFlight == 6 })
            #expect(downloader.queuedCount == 2)
            server.openGate("six")
            _ = await results.wait(for: 8)
            #expect(server.snapshot.maxInFlight == 6)
        }
    }

    @Test("queued tasks start by priority, FIFO within a priority")
    func priorityOrder() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let blocker = await block(downloader, server, gate: "prio")
            let results = Collector<DownloadOutcome>()
            let plan: [(String, DownloadPriority)] = [
                ("low", .low), ("normal1", .normal), ("veryHigh", .veryHigh),
                ("normal2", .normal), ("high", .high), ("veryLow", .veryLow)
            ]
            for (name, priority) in plan {
                downloader.download(server.url("/image/\(name)"), options: DownloadOptions(priority: priority)) { results.append($0) }
            }
            server.openGate("prio")
            _ = await blocker.wait(for: 1)
            _ = await results.wait(for: plan.count)
            #expect(order(server, gate: "prio") == ["veryHigh", "high", "normal1", "normal2", "low", "veryLow"].map { "/image/\($0)" })
        }
    }

    @Test("LIFO order starts the newest queued task first")
    func lifoOrder() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) {
                $0.maximumConcurrentDownloads = 1
                $0.executionOrder = .lifo
            }
            let blocker = await block(downloader, server, gate: "lifo")
            let results = Collector<DownloadOutcome>()
            for index in 1...4 {
                downloader.download(server.url("/image/\(index)")) { results.append($0) }
            }
            server.openGate("lifo")
            _ = await blocker.wait(for: 1)
            _ = await results.wait(for: 4)
            #expect(order(server, gate: "lifo") == ["/image/4", "/image/3", "/image/2", "/image/1"])
        }
    }

    @Test("changing a queued caller's priority takes effect at once")
    func changePriorityWhileQueued() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let blocker = await block(downloader, server, gate: "change")
            let results = Collector<DownloadOutcome>()
            downloader.download(server.url("/image/first")) { results.append($0) }
            let late = downloader.download(server.url("/image/second"), options: DownloadOptions(priority: .veryLow)) { results.append($0) }
            late.priority = .veryHigh
            #expect(late.priority == .veryHigh)
            server.openGate("change")
            _ = await blocker.wait(for: 1)
            _ = await results.wait(for: 2)
            #expect(order(server, gate: "change") == ["/image/second", "/image/first"])
        }
    }

    @Test("a shared task runs at the highest priority of its callers")
    func sharedTaskPriority() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let blocker = await block(downloader, server, gate: "shared")
            let results = Collector<DownloadOutcome>()
            downloader.download(server.url("/image/a"), options: DownloadOptions(priority: .high)) { results.append($0) }
            downloader.download(server.url("/image/b"), options: DownloadOptions(priority: .low)) { results.append($0) }
            // A second caller of b raises b above a.
            downloader.download(server.url("/image/b"), options: DownloadOptions(priority: .veryHigh)) { results.append($0) }
            server.openGate("shared")
            _ = await blocker.wait(for: 1)
            _ = await results.wait(for: 3)
            #expect(order(server, gate: "shared") == ["/image/b", "/image/a"])
        }
    }

    @Test("the highest caller of a queued shared task leaving lowers the task again")
    func sharedTaskPriorityLowered() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let blocker = await block(downloader, server, gate: "lower")
            let results = Collector<DownloadOutcome>()
            downloader.download(server.url("/image/a"), options: DownloadOptions(priority: .normal)) { results.append($0) }
            downloader.download(server.url("/image/b"), options: DownloadOptions(priority: .low)) { results.append($0) }
            let raising = downloader.download(server.url("/image/b"), options: DownloadOptions(priority: .veryHigh)) {
                results.append($0)
            }
            raising.cancel()
            server.openGate("lower")
            _ = await blocker.wait(for: 1)
            let outcomes = await results.wait(for: 3)
            #expect(outcomes.filter { if case .failure(.download(.cancelled)) = $0 { true } else { false } }.count == 1)
            #expect(order(server, gate: "lower") == ["/image/a", "/image/b"])
        }
    }
}
