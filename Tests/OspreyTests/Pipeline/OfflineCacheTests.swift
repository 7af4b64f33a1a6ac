import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// What a pipeline told the network is unavailable (``ImagePipeline/handleNetworkChange(available:metered:)``)
/// answers from its caches, against a loopback server that counts its connections: an expired disk
/// entry is served (and kept), ``CachePolicy/reload`` and ``CachePolicy/memoryOrLoad`` read the
/// caches instead of failing, and a miss fails without a connection, even to an origin that would
/// never answer.
@Suite("Offline: expired entries and reloads answered from the cache, a miss fails without connecting", .timeLimit(.minutes(3)))
struct OfflineCacheTests {
    @Test("offline: an expired disk entry (processed, original, data stage) is answered and kept; online it is a miss again")
    func expiredServedOffline() async throws {
        let clock = TestClock()
        try await PipelineFixture.run(now: clock.function) { f in
            let cached = f.source("/image/expired/cached")
            // Written before delivery: by default the disk write of a processed image is queued on a
            // processing thread after the result, where the disk storage's wait does not see it yet.
            _ = try await f.pipeline.image(for: cached, options: [.cacheWrites(.beforeDelivery)])
            let original = f.source("/image/expired/original")
            _ = try await f.pipeline.image(
                for: original, options: [.originalStorage(.disk), .processor(ImageProcessors.Grayscale()), .cacheWrites(.beforeDelivery)])
            await f.cache.diskStorage.waitForPendingWork()
            f.cache.memoryStorage.removeAll()
            clock.advance(by: 8 * 86_400)  // past the disk storage's default 7 days
            let cachedKey = f.pipeline.cacheKey(for: cached)
            #expect(!f.cache.diskStorage.isCached(forKey: cachedKey), "the entry has expired")
            let connections = f.server.snapshot.connections

            f.pipeline.handleNetworkChange(available: false, metered: false)
            let fromDisk = try await f.pipeline.image(for: cached)
            #expect(fromDisk.cacheType == .disk && fromDisk.image.width == 128)
            let resized = try await f.pipeline.image(
                for: original, options: [.processor(ImageProcessors.Resize(width: 20, height: 20, contentMode: .stretch))])
            #expect(resized.image.width == 20, "the expired original's disk entry, processed")
            let bytes = try await f.pipeline.data(for: original)
            #expect(bytes.provenance == .cache && !bytes.data.isEmpty, "the data stage reads the expired original too")
            let revalidated = try await f.pipeline.data(for: cached, options: [.cachePolicy(.revalidate)])
            let offline = OspreyError.download(.offline(url: f.server.url("/image/expired/cached")))
            #expect(revalidated.provenance == .staleAfterError(offline), "the revalidation fails offline without connecting")
            #expect(f.server.snapshot.connections == connections, "nothing connected offline")
            #expect(f.server.hits("/image/expired/cached") == 1 && f.server.hits("/image/expired/original") == 1)
            #expect(FileManager.default.fileExists(atPath: f.cache.cachePath(forKey: cachedKey)), "the expired entry stays on disk")

            f.pipeline.handleNetworkChange(available: true, metered: false)
            f.cache.memoryStorage.removeAll()
            let online = try await f.pipeline.image(for: cached)
            #expect(online.cacheType == .none && f.server.hits("/image/expired/cached") == 2, "online, the expired entry is a miss")
        }
    }

    @Test("offline: reload and memoryOrLoad answer from memory or disk instead of failing; online, reload downloads")
    func reloadFallsBackOffline() async throws {
        try await PipelineFixture.run { f in
            let cached = f.source("/image/reload/cached")
            _ = try await f.pipeline.image(for: cached, options: [.cacheWrites(.beforeDelivery)])  // on disk on return
            await f.cache.diskStorage.waitForPendingWork()
            let connections = f.server.snapshot.connections

            f.pipeline.handleNetworkChange(available: false, metered: false)
            let fromMemory = try await f.pipeline.image(for: cached, options: [.cachePolicy(.reload)])
            #expect(fromMemory.cacheType == .memory)
            f.cache.memoryStorage.removeAll()
            let fromDisk = try await f.pipeline.image(for: cached, options: [.cachePolicy(.reload)])
            #expect(fromDisk.cacheType == .disk)
            f.cache.memoryStorage.removeAll()
            let memoryOrLoad = try await f.pipeline.image(for: cached, options: [.cachePolicy(.memoryOrLoad)])
            #expect(memoryOrLoad.cacheType == .disk, "offline, memoryOrLoad reads the disk too")
            let bytes = try await f.pipeline.data(for: cached, options: [.cachePolicy(.reload)])
            #expect(bytes.provenance == .cache)
            let missing = f.server.url("/image/reload/missing")
            await #expect(throws: OspreyError.download(.offline(url: missing))) {
                _ = try await f.pipeline.image(for: .url(missing), options: [.cachePolicy(.reload)])
            }
            #expect(f.server.snapshot.connections == connections && f.server.hits("/image/reload/cached") == 1, "nothing sent offline")

            f.pipeline.handleNetworkChange(available: true, metered: false)
            let reloaded = try await f.pipeline.image(for: cached, options: [.cachePolicy(.reload)])
            #expect(reloaded.cacheType == .none && f.server.hits("/image/reload/cached") == 2, "online, reload loads")
        }
    }

    @Test(
        "offline: a miss fails at once with offline through image(for:), imageTask and data(for:), no connection made to an origin that would never answer"
    )
    func missFailsWithoutConnecting() async throws {
        try await PipelineFixture.run { f in
            f.pipeline.handleNetworkChange(available: false, metered: false)
            // The gate is never opened: a request that reached the origin would wait for the suite's time limit.
            let never = f.server.url("/gated/never/offline.jpg")
            let offline = OspreyError.download(.offline(url: never))
            await #expect(throws: offline) {
                _ = try await withDeadline("the offline miss") { try await f.pipeline.image(for: .url(never)) }
            }
            let task = f.pipeline.imageTask(for: .url(never))
            let events = try await withDeadline("the offline task's events") { () async -> [ImageTask.Event] in
                var events: [ImageTask.Event] = []
                for await event in task.events { events.append(event) }
                return events
            }
            guard case .finished(.failure(let error)) = events.last else {
                Issue.record("the task finished with \(String(describing: events.last))")
                return
            }
            #expect(error == offline && events.count == 1, "no progress before the failure")
            await #expect(throws: offline) {
                _ = try await withDeadline("the offline data miss") { try await f.pipeline.data(for: .url(never)) }
            }
            #expect(f.server.snapshot.connections == 0, "no connection reached the origin")
        }
    }
}
