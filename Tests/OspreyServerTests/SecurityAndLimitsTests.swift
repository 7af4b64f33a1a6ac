import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyServer

@Suite("Server SSRF guard and limits", .serialized, .timeLimit(.minutes(5)))
struct SecurityAndLimitsTests {
    @Test("address classification: loopback, private, link-local, CGNAT, unspecified, multicast, IPv4 in IPv6")
    func addresses() {
        let strict = SourceGuard()
        let refused: [IPAddress] = [
            .v4([127, 0, 0, 1]), .v4([10, 1, 2, 3]), .v4([172, 16, 0, 1]), .v4([192, 168, 1, 1]), .v4([169, 254, 169, 254]),
            .v4([100, 64, 0, 1]), .v4([0, 0, 0, 0]), .v4([224, 0, 0, 1]), .v4([255, 255, 255, 255]),
            .v6([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), .v6(Array(repeating: 0, count: 16)),
            .v6([0xfe, 0x80] + Array(repeating: 0, count: 14)), .v6([0xfd, 0] + Array(repeating: 0, count: 14)),
            .v6([0xff, 0x02] + Array(repeating: 0, count: 14)),
            .v6(Array(repeating: 0, count: 10) + [0xff, 0xff, 127, 0, 0, 1]),
            .v6(Array(repeating: 0, count: 10) + [0xff, 0xff, 10, 0, 0, 1]),
            .v6(Array(repeating: 0, count: 12) + [192, 168, 0, 1]),
            .v6([0x20, 0x02, 10, 0, 0, 1] + Array(repeating: 0, count: 10)),
            .v6([0, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 8) + [169, 254, 169, 254])
        ]
        for address in refused { #expect(strict.refusal(for: address) != nil, "\(address.text)") }
        let allowed: [IPAddress] = [.v4([93, 184, 216, 34]), .v4([8, 8, 8, 8]), .v6([0x26, 0x06, 0x28, 0] + Array(repeating: 0, count: 11) + [1])]
        for address in allowed { #expect(strict.refusal(for: address) == nil, "\(address.text)") }
        #expect(SourceGuard(allowLoopback: true).refusal(for: .v4([127, 0, 0, 1])) == nil)
        #expect(SourceGuard(allowLoopback: true).refusal(for: .v4([10, 0, 0, 1])) != nil)
    }

    @Test("allow-list with host-boundary matching")
    func allowList() {
        let guardian = SourceGuard(allowedSources: ["example.com", "*.images.net", "https://cdn.site.org/pub/"])
        func allowed(_ text: String) -> Bool { guardian.isAllowListed(URL(string: text)!) }
        #expect(allowed("http://example.com/a.jpg"))
        #expect(!allowed("http://example.com@evil.com/a.jpg"))
        #expect(!allowed("http://example.com.evil.com/a.jpg"))
        #expect(!allowed("http://notexample.com/a.jpg"))
        #expect(allowed("http://a.images.net/x.png"))
        #expect(!allowed("http://images.net.evil.com/x.png"))
        #expect(!allowed("http://evilimages.net/x.png"))
        #expect(allowed("https://cdn.site.org/pub/a.jpg"))
        #expect(!allowed("https://cdn.site.org/public/a.jpg"))
        #expect(!allowed("http://cdn.site.org/pub/a.jpg"))
        #expect(!allowed("https://cdn.site.org@evil.com/pub/a.jpg"))
    }

    @Test("loopback and private sources are refused by default, also behind a redirect; allow-list over HTTP")
    func refusals() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/redirect.jpg", LoopbackOrigin.Resource(status: 302, headers: ["Location": "http://127.0.0.1:\(origin.port)/photo.jpg"]))
        origin.set("/to-private.jpg", LoopbackOrigin.Resource(status: 302, headers: ["Location": "http://10.0.0.1/secret.jpg"]))
        let strict = try await ServerHarness.start { $0.allowLoopbackSources = false }
        for path in [
            "/unsafe/50x50/\(origin.address("/photo.jpg"))", "/unsafe/50x50/http://localhost:\(origin.port)/photo.jpg",
            "/unsafe/50x50/http://[::ffff:127.0.0.1]:\(origin.port)/photo.jpg", "/unsafe/50x50/http://169.254.169.254/latest",
            "/unsafe/50x50/http://0.0.0.0:\(origin.port)/photo.jpg"
        ] {
            let reply = try await strict.get(path)
            #expect(reply.status == 403, "\(path): \(reply.status) \(reply.text)")
        }
        #expect(origin.hits("/photo.jpg") == 0)
        await strict.stop()

        // Loopback allowed (tests), but a redirect hop to a private address is still refused.
        let loopback = try await ServerHarness.start()
        #expect(try await loopback.get("/unsafe/50x50/\(origin.address("/redirect.jpg"))").status == 200)
        let hop = try await loopback.get("/unsafe/50x50/\(origin.address("/to-private.jpg"))")
        #expect(hop.status == 403, "\(hop.text)")
        await loopback.stop()

        let listed = try await ServerHarness.start { $0.allowedSources = ["http://127.0.0.1:\(origin.port)/photo.jpg"] }
        #expect(try await listed.get("/unsafe/50x50/\(origin.address("/photo.jpg"))").status == 200)
        #expect(try await listed.get("/unsafe/50x50/\(origin.address("/redirect.jpg"))").status == 403)
        #expect(try await listed.get("/unsafe/50x50/http://127.0.0.1:\(origin.port)@evil.invalid/photo.jpg").status == 403)
        await listed.stop()
        await origin.stop()
    }

    @Test("limits: source bytes, source pixels, result dimension, download timeout, request deadline")
    func limits() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/hang.jpg", body: TestImages.photo, delay: .seconds(4))
        let server = try await ServerHarness.start {
            $0.maxSourceBytes = 2000
            $0.downloadTimeout = .seconds(1)
        }
        #expect(try await server.get("/unsafe/50x50/\(origin.address("/photo.jpg"))").status == 413)
        #expect(try await server.get("/unsafe/50x50/\(origin.address("/hang.jpg"))").status == 504)
        await server.stop()

        let pixels = try await ServerHarness.start {
            $0.maxSourcePixels = 100_000
            $0.maxResultDimension = 500
        }
        let tooMany = try await pixels.get("/unsafe/50x50/\(origin.address("/photo.jpg"))")
        #expect(tooMany.status == 422, "\(tooMany.text)")
        await pixels.stop()

        let result = try await ServerHarness.start {
            $0.maxResultDimension = 500
            $0.requestTimeout = .seconds(1)
        }
        #expect(try await result.get("/unsafe/600x100/\(origin.address("/photo.jpg"))").status == 422)
        #expect(try await result.get("/unsafe/50x50/\(origin.address("/hang.jpg"))").status == 504)
        await result.stop()

        // An enlargement over the limit is refused from the source's header, before the work:
        // for a cached source and for a new one (fetched first, decoded at 1x1), alike.
        let early = try await ServerHarness.start { $0.maxResultDimension = 500 }
        for (index, path) in [
            "/unsafe/fit-in/16384x16384/filters:upscale()/SRC", "/unsafe/16384x16384/smart/SRC",
            "/imgproxy/_/rs:fit:4000:4000:1:1/plain/SRC", "/unsafe/16384x16384/smart/SRC", "/unsafe/600x100/SRC"
        ].enumerated() {
            let source = origin.address("/photo.jpg") + "?n=\(index % 3)"
            let refused = try await early.get(path.replacingOccurrences(of: "SRC", with: source))
            #expect(refused.status == 422 && refused.text.contains("larger than the limit of 500"), "\(path): \(refused.text)")
        }
        #expect(try await early.get("/unsafe/fit-in/100x100/filters:fill(ff0000)/\(origin.address("/photo.jpg"))").status == 200)
        let metrics = try await early.get("/metrics").text
        #expect(metrics.contains("osprey_decodes_total{shrunk_on_load=\"true\"} 1"), "only the last request decoded:\n\(metrics)")
        #expect(!metrics.contains("shrunk_on_load=\"false\"} 1"), "no full decode")
        await early.stop()
        await origin.stop()
    }

    @Test("a cached source over the pixel limit is refused from its header: no decode, the original not read")
    func pixelLimitFromHeader() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)  // 400x300: 120,000 pixels
        let server = try await ServerHarness.start { $0.maxSourcePixels = 100_000 }
        let first = try await server.get("/unsafe/50x50/\(origin.address("/photo.jpg"))")
        #expect(first.status == 422 && first.text.contains("exceeds the limit of 100000 pixels"), "\(first.text)")
        // The next request validates the cached source and reads its header; later ones know it.
        #expect(try await server.get("/unsafe/51x51/\(origin.address("/photo.jpg"))").status == 422)
        let decodes = try await server.decodes()
        let again = try await server.get("/unsafe/52x52/\(origin.address("/photo.jpg"))")
        #expect(again.status == 422 && again.text.contains("400x300 pixels x 1 frame(s) exceeds the limit of 100000"), "\(again.text)")
        #expect(try await server.decodes() == decodes, "refused before any decode")
        await server.stop()
        await origin.stop()
    }
}
