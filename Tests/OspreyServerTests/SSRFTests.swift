import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server SSRF guard: private sources, pinned connections, redirect hops and watermarks", .serialized, .timeLimit(.minutes(3)))
struct SSRFTests {
    @Test("--allow-private-sources allows private and CGNAT addresses; link-local, loopback and the rest stay refused")
    func privateAddresses() {
        let guardian = SourceGuard(allowPrivate: true)
        let allowed: [IPAddress] = [
            .v4([10, 1, 2, 3]), .v4([172, 16, 0, 1]), .v4([192, 168, 1, 1]), .v4([100, 64, 0, 1]),
            .v6([0xfd, 0] + Array(repeating: 0, count: 14)), .v6(Array(repeating: 0, count: 10) + [0xff, 0xff, 10, 0, 0, 1])
        ]
        for address in allowed { #expect(guardian.refusal(for: address) == nil, "\(address.text)") }
        let refused: [IPAddress] = [
            .v4([169, 254, 169, 254]), .v6([0xfe, 0x80] + Array(repeating: 0, count: 14)), .v4([127, 0, 0, 1]),
            .v4([0, 0, 0, 0]), .v4([224, 0, 0, 1]), .v6(Array(repeating: 0, count: 10) + [0xff, 0xff, 169, 254, 169, 254])
        ]
        for address in refused { #expect(guardian.refusal(for: address) != nil, "\(address.text)") }
        #expect(SourceGuard().refusal(for: .v4([10, 1, 2, 3])) != nil, "off by default")
    }

    @Test("allowPrivateSources reaches the server's guard: private literals pass its check, link-local does not (no traffic sent)")
    func privateConfigured() async throws {
        let path = "/unsafe/50x50/http://10.255.255.1/photo.jpg"
        let strict = try await ServerHarness.start { $0.allowLoopbackSources = false }
        #expect(try await strict.get(path).status == 403)
        await strict.stop()
        let lan = try await ServerHarness.start { $0.allowPrivateSources = true }
        let guardian = lan.server.service.sourceGuard
        let addresses = try await guardian.checkedAddresses(try #require(URL(string: "http://10.255.255.1/photo.jpg")))
        #expect(addresses == [.v4([10, 255, 255, 1])])
        #expect(try await lan.get("/unsafe/50x50/http://169.254.169.254/latest").status == 403, "link-local stays refused")
        await lan.stop()
    }

    @Test("http requests are pinned to the checked address, the Host header keeping the name")
    func pinnedRequest() throws {
        var request = DownloadRequest(url: try #require(URL(string: "http://images.example.com:8080/a/b.jpg?w=1")))
        request.setValue("\"v1\"", forHTTPHeaderField: "If-None-Match")
        let v4 = GuardedLoader.pinned(request, to: .v4([93, 184, 216, 34]))
        #expect(v4.url.absoluteString == "http://93.184.216.34:8080/a/b.jpg?w=1")
        #expect(v4.value(forHTTPHeaderField: "Host") == "images.example.com:8080")
        #expect(v4.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        let plain = DownloadRequest(url: try #require(URL(string: "http://example.com/x.png")))
        let v6 = GuardedLoader.pinned(plain, to: .v6([0x26, 0x06, 0x28, 0] + Array(repeating: 0, count: 11) + [1]))
        #expect(v6.url.host?.contains("2606") == true)
        #expect(v6.url.absoluteString.hasPrefix("http://[2606:2800:"))
        #expect(v6.value(forHTTPHeaderField: "Host") == "example.com")
    }

    @Test("a source named by host name is fetched from its checked address with its own Host header")
    func pinnedOverHTTP() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let reply = try await server.get("/unsafe/50x50/http://localhost:\(origin.port)/photo.jpg")
        #expect(reply.status == 200, "\(reply.text)")
        #expect(origin.host("/photo.jpg") == "localhost:\(origin.port)")
        await server.stop()
        await origin.stop()
    }

    @Test("watermark URLs go through the same checks: a refused address and a redirect hop to one are 403")
    func watermarks() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/mark.png", LoopbackOrigin.Resource(status: 302, headers: ["Location": "http://169.254.169.254/latest/mark.png"]))
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        let hop = try await server.get("/unsafe/100x100/filters:watermark(\(origin.address("/mark.png")),0,0,0)/\(src)")
        #expect(hop.status == 403, "\(hop.text)")
        #expect(hop.text.contains("watermark"), "\(hop.text)")
        await server.stop()
        let strict = try await ServerHarness.start { $0.allowLoopbackSources = false }
        let loopback = try await strict.get("/unsafe/100x100/filters:watermark(\(origin.address("/mark.png")),0,0,0)/http://93.184.216.34/none.jpg")
        #expect(loopback.status == 403, "\(loopback.text)")
        await strict.stop()
        await origin.stop()
    }
}
