import AsyncHTTPClient
import Foundation
import NIOCore
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyServer

@Suite("Server metrics by phase and cache level; keep-alive on misses", .serialized, .timeLimit(.minutes(3)))
struct MetricsAndConnectionTests {
    @Test("/metrics: duration by phase (queue, download, process, encode), hits by level, coalesced requests, origin fetches")
    func metrics() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/slow.jpg", body: TestImages.photo, delay: .milliseconds(500))
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        #expect(try await server.get("/unsafe/80x80/\(src)").status == 200)  // miss: downloaded
        #expect(try await server.get("/unsafe/80x80/\(src)").status == 200)  // result_memory
        #expect(try await server.get("/unsafe/40x40/\(src)").status == 200)  // original: made from the cached original
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await server.get("/unsafe/20x20/\(origin.address("/slow.jpg"))").status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == [200, 200, 200, 200])
        let text = try await server.get("/metrics").text
        for line in [
            "osprey_cache_hits_total{level=\"miss\"} 2", "osprey_cache_hits_total{level=\"result_memory\"} 1",
            "osprey_cache_hits_total{level=\"original\"} 1", "osprey_coalesced_requests_total 3",
            "osprey_origin_fetches_total 2", "osprey_origin_not_modified_total 0"
        ] {
            #expect(text.contains(line), "\(line)")
        }
        // One decode per variant made: validating and caching a source decodes nothing.
        #expect(try await server.decodes() == 3)
        for phase in ["queue", "download", "process", "encode", "total"] {
            #expect(text.contains("osprey_request_duration_seconds_count{phase=\"\(phase)\"}"), "\(phase)")
        }
        // The memory caches' levels and limits: the result cache holds the three results made.
        let held = try #require(Self.value(of: "osprey_memory_cache_bytes{cache=\"results\"}", in: text))
        #expect(held == Double(server.server.service.results.memoryCost) && held > 0)
        #expect(Self.value(of: "osprey_memory_cache_limit_bytes{cache=\"results\"}", in: text) == Double(256 << 20))
        #expect(Self.value(of: "osprey_memory_cache_limit_bytes{cache=\"sources\"}", in: text) != nil)
        await server.stop()
        await origin.stop()
    }

    @Test("two misses on one keep-alive connection both succeed: no Connection: close, one connection")
    func keepAlive() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/a.jpg", body: TestImages.photo)
        origin.set("/b.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        // One connection at most: every request goes over the same connection while it stays open.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 1)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        func get(_ path: String) async throws -> (status: Int, connection: String?) {
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)"), timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 24)
            return (Int(response.status.code), response.headers.first(name: "connection"))
        }
        for name in ["a", "b"] {
            let reply = try await get("/unsafe/50x50/\(origin.address("/\(name).jpg"))")
            #expect(reply.status == 200)
            #expect(reply.connection?.lowercased() != "close", "a miss keeps the connection alive")
        }
        let metrics = try await get("/metrics")
        #expect(metrics.status == 200)
        try await client.shutdown()
        let text = try await server.get("/metrics").text
        // The test client's one connection, then the harness's own for this read.
        #expect(text.contains("osprey_connections_total 2"), "\(text.split(separator: "\n").filter { $0.contains("connections") })")
        await server.stop()
        await origin.stop()
    }

    /// The value of the sample `name` (with its labels) in a Prometheus exposition.
    static func value(of name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }
}
