import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server revalidation of stale originals with the origin", .serialized, .timeLimit(.minutes(3)))
struct RevalidationTests {
    static func resource(_ body: Data, _ validators: [String: String]) -> LoopbackOrigin.Resource {
        LoopbackOrigin.Resource(headers: ["Content-Type": "image/jpeg"].merging(validators) { $1 }, body: body)
    }

    @Test("ETag: an unchanged origin answers 304 and is not downloaded again; a changed one gives new pixels and a new ETag")
    func etag() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", Self.resource(TestImages.photo, ["ETag": "\"v1\""]))
        let server = try await ServerHarness.start { $0.originTTL = 1 }
        let path = "/unsafe/fit-in/60x60/\(origin.address("/photo.jpg"))"
        let small = "/unsafe/fit-in/30x30/\(origin.address("/photo.jpg"))"
        let first = try await server.get(path)
        #expect(first.status == 200 && first.image?.height == 45)
        try await Task.sleep(for: .milliseconds(1300))
        // Stale: revalidated with If-None-Match, the origin answers 304, the cached original is used.
        let second = try await server.get(path)
        #expect(second.status == 200)
        #expect(second.body == first.body)
        #expect(second.header("ETag") == first.header("ETag"))
        // Another size of the source: made from the cached original, never downloaded again (on a
        // slow run the 1 s freshness may have passed once more: then it is one more 304, not a 200).
        #expect(try await server.get(small).image?.height == 23)
        #expect(origin.hits("/photo.jpg", status: 200) == 1)
        #expect(origin.hits("/photo.jpg", status: 304) >= 1)

        origin.set("/photo.jpg", Self.resource(TestImages.make(width: 300, height: 300, alpha: false, format: .jpeg), ["ETag": "\"v2\""]))
        try await Task.sleep(for: .milliseconds(1300))
        let third = try await server.get(path)
        #expect(third.image?.height == 60, "the changed source is picked up")
        #expect(third.header("ETag") != first.header("ETag"))
        // Every variant follows the new original.
        #expect(try await server.get(small).image?.height == 30)
        #expect(origin.hits("/photo.jpg", status: 200) == 2)
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_origin_not_modified_total \(origin.hits("/photo.jpg", status: 304))\n"))
        await server.stop()
        await origin.stop()
    }

    @Test("Last-Modified alone revalidates too; the origin's max-age shortens the freshness time")
    func lastModified() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", Self.resource(TestImages.photo, ["Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT", "Cache-Control": "max-age=1"]))
        let server = try await ServerHarness.start { $0.originTTL = 3600 }
        let path = "/unsafe/50x50/\(origin.address("/photo.jpg"))"
        let first = try await server.get(path)
        #expect(first.status == 200)
        #expect(first.header("Cache-Control") == "public, max-age=1")
        try await Task.sleep(for: .milliseconds(1300))
        let second = try await server.get(path)
        #expect(second.body == first.body)
        #expect(origin.hits("/photo.jpg", status: 200) == 1)
        #expect(origin.hits("/photo.jpg", status: 304) == 1)
        await server.stop()
        await origin.stop()
    }

    @Test("a restarted server with a disk cache uses its cached originals: fresh ones without asking, stale ones revalidated (304)")
    func afterRestart() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", Self.resource(TestImages.photo, ["ETag": "\"v1\""]))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-serve-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await ServerHarness.start { $0.cacheDirectory = directory }
        #expect(try await first.get("/unsafe/70x70/\(origin.address("/photo.jpg"))").status == 200)
        await first.server.flushCaches()
        await first.stop()
        // The original's age is kept with it on disk: still fresh after the restart.
        let second = try await ServerHarness.start { $0.cacheDirectory = directory }
        let reply = try await second.get("/unsafe/35x35/\(origin.address("/photo.jpg"))")
        #expect(reply.status == 200 && reply.image?.width == 35)
        #expect(origin.hits("/photo.jpg", status: 200) == 1 && origin.hits("/photo.jpg", status: 304) == 0)
        await second.stop()
        // Stale for a server whose origin TTL is 0: validated (304), its original read from disk.
        let third = try await ServerHarness.start {
            $0.cacheDirectory = directory
            $0.originTTL = 0
        }
        #expect(try await third.get("/unsafe/36x36/\(origin.address("/photo.jpg"))").image?.width == 36)
        #expect(origin.hits("/photo.jpg", status: 200) == 1)
        #expect(origin.hits("/photo.jpg", status: 304) == 1)
        await third.stop()
        await origin.stop()
    }
}
