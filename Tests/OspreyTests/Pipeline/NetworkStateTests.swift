import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// ``ImagePipeline/handleNetworkChange(available:metered:)`` and ``ImagePipeline/handlePowerSaver(_:)``
/// against a loopback server that counts the requests it gets: offline, a cached image is answered
/// from disk and a miss fails at once with the typed reason without a request; a widget whose load
/// failed offline shows its image when the network comes back; metered or power saving, prefetching
/// waits and a low-data source is loaded instead.
@Suite("Network state: offline answers from disk or fails at once, retries when back, metered saves data", .timeLimit(.minutes(3)))
struct NetworkStateTests {
    @Test("offline: an image on disk is answered from disk, an original on disk is processed, a miss fails with offline and sends nothing")
    func offlineAnswers() async throws {
        try await PipelineFixture.run { f in
            let cached = f.source("/image/offline/cached")
            // On disk when they return (by default a processed image's disk write follows the result).
            _ = try await f.pipeline.image(for: cached, options: [.cacheWrites(.beforeDelivery)])
            let original = f.source("/image/offline/original")
            _ = try await f.pipeline.image(for: original, options: [.originalStorage(.disk), .cacheWrites(.beforeDelivery)])
            await f.cache.diskStorage.waitForPendingWork()
            f.cache.memoryStorage.removeAll()

            f.pipeline.handleNetworkChange(available: false, metered: false)
            #expect(!f.pipeline.isNetworkAvailable)
            let fromDisk = try await f.pipeline.image(for: cached)
            #expect(fromDisk.cacheType == .disk)
            let resized = try await f.pipeline.image(
                for: original, options: [.processor(ImageProcessors.Resize(width: 20, height: 20, contentMode: .stretch))])
            #expect(resized.image.width == 20, "the original's disk entry, processed")
            #expect(f.server.hits("/image/offline/cached") == 1 && f.server.hits("/image/offline/original") == 1, "nothing sent offline")

            let missing = f.server.url("/image/offline/missing")
            await #expect(throws: OspreyError.download(.offline(url: missing))) {
                _ = try await f.pipeline.image(for: .url(missing))
            }
            #expect(f.server.hits("/image/offline/missing") == 0, "no request reached the origin")
            let error = OspreyError.download(.offline(url: missing))
            #expect(error.isOffline && error.description.contains("network is unavailable"))

            f.pipeline.handleNetworkChange(available: true, metered: false)
            _ = try await f.pipeline.image(for: .url(missing))
            #expect(f.server.hits("/image/offline/missing") == 1)
        }
    }

    @Test("a widget whose load failed offline shows its image when the network comes back, with no call from the app")
    func widgetRetriesWhenBack() async throws {
        try await PipelineFixture.run { f in try await Self.widgetRetriesWhenBack(f) }
    }

    @MainActor
    private static func widgetRetriesWhenBack(_ f: PipelineFixture) async throws {
        f.pipeline.handleNetworkChange(available: false, metered: false)
        let widget = CollectingWidget()
        let results = Collector<OspreyError?>()
        let settings = TargetSettings<CollectingWidget>(sizedToTarget: false)
        let source = f.source("/image/offline/widget")
        widget.osprey.setImage(with: source, settings: settings, pipeline: f.pipeline, completion: { results.append($0.errorValue) })
        let first = await results.wait(for: 1)
        #expect(first.first??.isOffline == true, "the caller is told at once: \(String(describing: first))")
        #expect(widget.shown.values.isEmpty && f.server.hits("/image/offline/widget") == 0)

        // A widget given another source meanwhile does not load the old one when the network returns.
        let moved = CollectingWidget()
        let movedResults = Collector<OspreyError?>()
        moved.osprey.setImage(
            with: f.source("/image/offline/moved"), settings: settings, pipeline: f.pipeline,
            completion: { movedResults.append($0.errorValue) })
        #expect(await movedResults.wait(for: 1).first??.isOffline == true)
        moved.osprey.setImage(with: nil as ImageSource?, pipeline: f.pipeline)

        f.pipeline.handleNetworkChange(available: true, metered: false)
        #expect(await widget.shown.wait(for: 1) == [128], "the widget shows its image after the network came back")
        #expect(f.server.hits("/image/offline/widget") == 1)
        #expect(f.server.hits("/image/offline/moved") == 0 && moved.shown.values.isEmpty, "a widget that moved on is not reloaded")
        #expect(results.values.count == 1, "the completion is not called again")
    }

    @Test("metered or power saving: prefetching waits and resumes after; a low-data source is loaded instead while it lasts")
    func meteredSavesData() async throws {
        try await PipelineFixture.run { f in
            let prefetcher = ImagePrefetcher(pipeline: f.pipeline, maxConcurrentRequests: 2)
            f.pipeline.handleNetworkChange(available: true, metered: true)
            let sources = (0..<3).map { f.source("/image/metered/\($0)") }
            let run = Task { await prefetcher.prefetch(sources) }
            try await eventually("the sources are queued") { prefetcher.isPrefetching }
            #expect((0..<3).allSatisfy { f.server.hits("/image/metered/\($0)") == 0 }, "nothing started while metered")
            f.pipeline.handlePowerSaver(true)
            f.pipeline.handleNetworkChange(available: true, metered: false)
            #expect(prefetcher.isPrefetching && f.server.hits("/image/metered/0") == 0, "power saving still holds them")
            f.pipeline.handlePowerSaver(false)
            let report = try await run.value("the resumed prefetch's report")
            #expect(report.completed.count == 3)

            let big = f.source("/image/lowdata/big"), small = f.source("/image/lowdata/small")
            f.pipeline.handleNetworkChange(available: true, metered: true)
            let saved = try await f.pipeline.image(for: big, options: [.lowDataSource(small)])
            #expect(saved.source.cacheKey == small.cacheKey)
            #expect(f.server.hits("/image/lowdata/small") == 1 && f.server.hits("/image/lowdata/big") == 0)
            f.pipeline.handleNetworkChange(available: true, metered: false)
            let full = try await f.pipeline.image(for: big, options: [.lowDataSource(small)])
            #expect(full.source.cacheKey == big.cacheKey && f.server.hits("/image/lowdata/big") == 1)
        }
    }
}

extension Result {
    /// The error, `nil` on success.
    fileprivate var errorValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A main-actor widget whose content is the image, collecting the widths of what it displays.
@MainActor
private final class CollectingWidget: ImageTarget {
    let ospreyController = ImageTargetController()
    let shown = Collector<Int>()
    var ospreyPixelSize: (width: Int, height: Int)? { nil }
    private(set) var ospreyHasContent = false
    nonisolated static func makeContent(_ image: Image) -> Image? { image }
    func display(_ content: Image?) {
        guard let content else { return }
        ospreyHasContent = true
        shown.append(content.width)
    }
}
