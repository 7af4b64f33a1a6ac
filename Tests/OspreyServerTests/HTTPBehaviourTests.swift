import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server HTTP behaviour: negotiation, caching headers, result cache, coalescing", .serialized, .timeLimit(.minutes(5)))
struct HTTPBehaviourTests {
    @Test("format negotiation from Accept with q-values, Vary: Accept on every negotiated answer incl. hits")
    func negotiation() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/alpha.png", body: TestImages.transparentPNG, contentType: "image/png")
        let server = try await ServerHarness.start()
        let path = "/unsafe/100x100/\(origin.address("/photo.jpg"))"
        let avif: ImageFormat = ImageFormat.avif.canEncode ? .avif : .webp
        let cases: [(String?, ImageFormat)] = [
            (nil, .jpeg),
            ("image/webp,image/*,*/*;q=0.8", .webp),
            ("image/avif,image/webp,image/*", avif),
            ("image/avif;q=0.5,image/webp;q=0.9", .webp),
            ("image/avif;q=0,image/webp;q=0", .jpeg),
            ("image/*", .jpeg),
            ("image/webp,image/*", .webp)  // again: a result-cache hit
        ]
        for (accept, format) in cases {
            let reply = try await server.get(path, headers: accept.map { [("Accept", $0)] } ?? [])
            #expect(reply.status == 200)
            #expect(reply.image?.format == format, "\(accept ?? "none")")
            #expect(reply.header("Content-Type") == format.mimeType)
            #expect(reply.header("Vary") == "Accept", "\(accept ?? "none")")
        }
        // Alpha is kept: PNG rather than JPEG when no modern format is accepted.
        let alpha = try await server.get("/unsafe/50x50/\(origin.address("/alpha.png"))", headers: [("Accept", "image/jpeg")])
        #expect(alpha.image?.format == .png)
        // A URL naming its format is not negotiated: no Vary.
        let named = try await server.get("/unsafe/100x100/filters:format(png)/\(origin.address("/photo.jpg"))", headers: [("Accept", "image/webp")])
        #expect(named.image?.format == .png)
        #expect(named.header("Vary") == nil)
        await server.stop()
        await origin.stop()
    }

    @Test("strong ETag, 304 on If-None-Match without processing, Cache-Control, Last-Modified")
    func conditional() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start {
            $0.maxAge = 600
            $0.errorMaxAge = 5
        }
        let path = "/unsafe/80x80/\(origin.address("/photo.jpg"))"
        let first = try await server.get(path)
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        #expect(first.header("Cache-Control") == "public, max-age=600")
        #expect(first.header("Last-Modified")?.hasSuffix("GMT") == true)
        let second = try await server.get(path, headers: [("If-None-Match", etag)])
        #expect(second.status == 304)
        #expect(second.body.isEmpty)
        #expect(second.header("ETag") == etag)
        let other = try await server.get(path, headers: [("If-None-Match", "\"other\"")])
        #expect(other.status == 200)
        let error = try await server.get("/unsafe/80x80/filters:nope()/\(origin.address("/photo.jpg"))")
        #expect(error.header("Cache-Control") == "public, max-age=5")
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_cache_hits_total{level=\"result_memory\"} 2"))
        #expect(origin.hits("/photo.jpg") == 1)
        await server.stop()
        await origin.stop()
    }

    @Test("N concurrent identical requests make one origin fetch; different sizes share the download")
    func coalescing() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/slow.jpg", body: TestImages.photo, delay: .milliseconds(500))
        let server = try await ServerHarness.start()
        let path = "/unsafe/90x90/\(origin.address("/slow.jpg"))"
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                let variant = index < 6 ? path : "/unsafe/\(50 + index)x50/\(origin.address("/slow.jpg"))"
                group.addTask { try await server.get(variant).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        #expect(origin.hits("/slow.jpg") == 1)
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_origin_fetches_total 1"))
        await server.stop()
        await origin.stop()
    }

    @Test("the origin's Cache-Control: no-store, private, max-age are respected, or overridden")
    func originCacheControl() async throws {
        let origin = try await LoopbackOrigin.start()
        for (name, value) in [("nostore", "no-store"), ("private", "private, max-age=120"), ("short", "public, max-age=60"), ("plain", "")] {
            origin.set(
                "/\(name).jpg", LoopbackOrigin.Resource(headers: ["Content-Type": "image/jpeg", "Cache-Control": value], body: TestImages.photo))
        }
        let server = try await ServerHarness.start { $0.maxAge = 3600 }
        func cacheControl(_ name: String, on server: ServerHarness) async throws -> String? {
            try await server.get("/unsafe/20x20/\(origin.address("/\(name).jpg"))").header("Cache-Control")
        }
        #expect(try await cacheControl("nostore", on: server) == "no-store")
        #expect(try await cacheControl("private", on: server) == "private, max-age=120")
        #expect(try await cacheControl("short", on: server) == "public, max-age=60")
        #expect(try await cacheControl("short", on: server) == "public, max-age=60")  // a result-cache hit keeps it
        #expect(try await cacheControl("plain", on: server) == "public, max-age=3600")
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_cache_hits_total{level=\"result_memory\"} 1"))
        await server.stop()
        let overriding = try await ServerHarness.start {
            $0.maxAge = 3600
            $0.respectOriginCacheControl = false
        }
        #expect(try await cacheControl("nostore", on: overriding) == "public, max-age=3600")
        await overriding.stop()
        await origin.stop()
    }

    @Test("after the origin TTL a changed source is fetched again and picked up")
    func originTTL() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/changing.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start { $0.originTTL = 1 }
        let path = "/unsafe/60x0/\(origin.address("/changing.jpg"))"
        let before = try await server.get(path)
        #expect(before.image?.height == 45)
        #expect(try await server.get(path).body == before.body)  // cached
        origin.set("/changing.jpg", body: TestImages.make(width: 300, height: 300, alpha: false, format: .jpeg))
        try await Task.sleep(for: .milliseconds(1500))
        let after = try await server.get(path)
        #expect(after.image?.height == 60)
        #expect(after.header("ETag") != before.header("ETag"))
        #expect(origin.hits("/changing.jpg") == 2)
        await server.stop()
        await origin.stop()
    }

    @Test("results survive a restart in the disk cache (counted through /metrics)")
    func diskCache() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-serve-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = "/unsafe/70x70/\(origin.address("/photo.jpg"))"
        let first = try await ServerHarness.start { $0.cacheDirectory = directory }
        let original = try await first.get(path)
        #expect(original.status == 200)
        await first.server.flushCaches()
        await first.stop()
        let second = try await ServerHarness.start { $0.cacheDirectory = directory }
        let again = try await second.get(path)
        #expect(again.status == 200)
        #expect(again.body == original.body)
        #expect(again.header("ETag") == original.header("ETag"))
        let metrics = try await second.get("/metrics").text
        #expect(metrics.contains("osprey_cache_hits_total{level=\"result_disk\"} 1"))
        #expect(origin.hits("/photo.jpg") == 1)
        await second.stop()
        await origin.stop()
    }

    @Test("imgproxy URLs over HTTP: pyimgproxy fixtures and unsigned options")
    func imgproxy() async throws {
        let fixtures = ClientFixtures.shared
        let origin = try await LoopbackOrigin.fixtureOrigin(port: fixtures.origin_port)
        let pair = try #require(ImgproxySigner.KeyPair(hexKey: fixtures.imgproxy_key, hexSalt: fixtures.imgproxy_salt))
        let server = try await ServerHarness.start {
            $0.imgproxyKeys = [pair]
            $0.imgproxyPresets = ["thumb": "rs:fill:32:32"]
        }
        for item in fixtures.imgproxy {
            let reply = try await server.get("/imgproxy" + item.path)
            #expect(reply.status == 200, "\(item.name): \(reply.text)")
            let image = try #require(reply.image, "\(item.name)")
            #expect(image.width == item.width && image.height == item.height, "\(item.name): \(image.width)x\(image.height)")
            #expect(image.format?.rawValue == item.format, "\(item.name)")
        }
        let forged = try await server.get("/imgproxy/AAAA/rs:fill:10:10/plain/\(origin.address("/photo.jpg"))")
        #expect(forged.status == 403)
        await server.stop()

        let unsigned = try await ServerHarness.start { $0.imgproxyPresets = ["thumb": "rs:fill:32:32"] }
        let src = origin.address("/photo.jpg")
        let encoded = Data(src.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let split = encoded.prefix(10) + "/" + encoded.dropFirst(10)
        let cases: [(String, Int, Int, String)] = [
            ("/imgproxy/_/rs:fit:100:100/plain/\(src)@png", 100, 75, "png"),
            ("/imgproxy/_/rs:fit:1000:1000/plain/\(src)", 400, 300, "jpeg"),  // no enlarge by default
            ("/imgproxy/_/rs:fit:1000:1000:1/plain/\(src)", 1000, 750, "jpeg"),
            ("/imgproxy/_/rs:fill:100:100/g:sm/\(split).webp", 100, 100, "webp"),
            ("/imgproxy/_/s:60:60/rt:force/q:50/plain/\(src)", 60, 60, "jpeg"),
            ("/imgproxy/_/w:80/plain/\(src)", 80, 60, "jpeg"),
            ("/imgproxy/_/h:30/f:png/plain/\(src)", 40, 30, "png"),
            ("/imgproxy/_/c:200:200:nowe/rs:fill:50:50/plain/\(src)", 50, 50, "jpeg"),
            ("/imgproxy/_/rs:fill:100:50/g:soea/bl:1/sh:1/ar:1/sm:1/cb:abc/plain/\(src)", 100, 50, "jpeg"),
            ("/imgproxy/_/pr:thumb/plain/\(src)", 32, 32, "jpeg"),
            ("/imgproxy/_/exp:4102444800/w:10/plain/\(src)", 10, 8, "jpeg"),
            // The transparent canvas keeps alpha: PNG unless a format is asked for (negotiation).
            ("/imgproxy/_/rs:fit:200:200:0:1/plain/\(src)", 200, 200, "png"),
            ("/imgproxy/_/rs:fill:100:100/dpr:2/plain/\(src)", 200, 200, "jpeg"),
            ("/imgproxy/_/rs:fill-down:800:200/plain/\(src)", 400, 100, "jpeg"),
            ("/imgproxy/_/rs:auto:100:200/plain/\(src)", 100, 75, "jpeg"),
            ("/imgproxy/_/rs:force:800:100/plain/\(src)", 400, 50, "jpeg"),
            ("/imgproxy/_/rs:fit:100:50/rot:90/plain/\(src)", 38, 50, "jpeg"),
            ("/imgproxy/_/rs:fit:100:100/pd:10:5/plain/\(src)@jpg", 110, 95, "jpeg")
        ]
        for (path, width, height, format) in cases {
            let reply = try await unsigned.get(path)
            #expect(reply.status == 200, "\(path): \(reply.text)")
            let image = try #require(reply.image, "\(path)")
            #expect(image.width == width && image.height == height, "\(path): \(image.width)x\(image.height)")
            #expect(image.format?.rawValue == format, "\(path)")
        }
        // extend: a transparent canvas in PNG, flattened onto white in JPEG, or onto bg.
        let corners: [(String, [UInt8])] = [
            ("/imgproxy/_/rs:fit:200:200:0:1/plain/\(src)@png", [0]),
            ("/imgproxy/_/rs:fit:200:200:0:1/plain/\(src)@jpg", [255, 255, 255]),
            ("/imgproxy/_/rs:fit:200:200:0:1/bg:255:0:0/plain/\(src)@png", [255, 0, 0, 255])
        ]
        for (path, expected) in corners {
            let image = try #require(try await unsigned.get(path).image, "\(path)")
            let rgba = try image.rgbaPixels()
            let corner = expected.count == 1 ? [rgba[3]] : Array(rgba[0..<expected.count])
            #expect(corner.enumerated().allSatisfy { abs(Int($1) - Int(expected[$0])) <= 3 }, "\(path): corner \(Array(rgba[0..<4]))")
        }
        let errors: [(String, Int)] = [
            ("/imgproxy/_/dpr:0/plain/\(src)", 400),
            ("/imgproxy/_/rot:45/plain/\(src)", 400),
            ("/imgproxy/_/bg:nothex/plain/\(src)", 400),
            ("/imgproxy/_/rs:squash:10:10/plain/\(src)", 400),
            ("/imgproxy/_/zz:1/plain/\(src)", 400),
            ("/imgproxy/_/pr:missing/plain/\(src)", 400),
            ("/imgproxy/_/exp:1000/plain/\(src)", 404),
            ("/imgproxy/_/w:10/!!!notbase64", 400),
            ("/imgproxy/_/q:500/plain/\(src)", 400)
        ]
        for (path, status) in errors {
            let reply = try await unsigned.get(path)
            #expect(reply.status == status, "\(path): \(reply.status) \(reply.text)")
        }
        await unsigned.stop()
    }
}
