import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// A request whose caller lost interest while its download ran (a grid cell scrolled away) lets the
/// download finish into the cache: one download, never two.
@Suite("Pipeline: a download finished at low priority is downloaded once", .timeLimit(.minutes(2)))
struct FinishDownloadTests {
    @Test("lowering a running request's priority keeps its download: one download, the image cached")
    func loweringKeepsDownload() async throws {
        try await withFixture("lower") { pipeline, server, url in
            let done = Collector<Bool>()
            let task = pipeline.loadImage(with: .url(url)) { done.append((try? $0.get()) != nil) }
            #expect(await server.waitUntil { $0.hits[url.path] == 1 })
            task.priority = .veryLow
            server.openGate("lower")
            #expect(await done.wait(for: 1) == [true])
            #expect(server.hits(url.path) == 1)
        }
    }

    @Test("a target cancelled while loading finishes the download into the cache: one download")
    func cancelledTargetFinishesDownload() async throws {
        try await withFixture("target") { pipeline, server, url in
            let target = await MainActor.run { TestWidget() }
            await MainActor.run { _ = target.osprey.setImage(with: .url(url), pipeline: pipeline) }
            #expect(await server.waitUntil { $0.hits[url.path] == 1 })
            await MainActor.run { target.osprey.cancelDownloadTask() }
            server.openGate("target")
            try await eventually("the image in the memory cache") { pipeline.cachedImage(for: .url(url)) != nil }
            #expect(server.hits(url.path) == 1)
        }
    }

    private func withFixture(
        _ gate: String, _ body: (ImagePipeline, LoopbackOrigin, URL) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-finish-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLoopback { server, loader in
            let cache = ImageCache(name: "finish", diskConfig: DiskStorage.Config(name: "finish", directory: directory))
            let pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: makeDownloader(loader)))
            try await body(pipeline, server, server.url("/gated/\(gate)/image"))
            await cache.diskStorage.waitForPendingWork()
        }
    }
}
