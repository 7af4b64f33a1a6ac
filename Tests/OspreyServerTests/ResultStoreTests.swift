import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The result store in a bucket, shared by instances (moto)", .serialized, .timeLimit(.minutes(15)))
struct ResultStoreTests {
    static func encodes(_ metrics: String) -> Int {
        metrics.split(separator: "\n").first { $0.hasPrefix("osprey_request_duration_seconds_count{phase=\"encode\"}") }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test("A variant made by one instance is served by another without processing, also under another signature")
    func shared() async throws {
        let moto = try await MotoServer.start(buckets: ["photos", "results"])
        try await moto.put(TestImages.photo, bucket: "photos", key: "a.jpg")
        let one = try #require(ImgproxySigner.KeyPair(hexKey: "6b657931", hexSalt: "73616c7431"))
        let two = try #require(ImgproxySigner.KeyPair(hexKey: "6b657932", hexSalt: "73616c7432"))
        func start() async throws -> ServerHarness {
            try await ServerHarness.start {
                $0.s3 = moto.configuration()
                $0.resultStore = S3Path("s3://results/variants")
                $0.imgproxyKeys = [one, two]
            }
        }
        let path = "/rs:fit:60:60/plain/s3://photos/a.jpg@webp"
        let signer = ImgproxySigner(pairs: [one, two])
        let first = try await start()
        let made = try await first.get("/imgproxy/\(signer.signature(of: path, pair: one))\(path)")
        #expect(made.status == 200 && made.image?.width == 60, "\(made.status) \(made.text.prefix(200))")
        await first.server.flushCaches()
        #expect(try await first.get("/metrics").text.contains("osprey_result_store_total{outcome=\"written\"} 1"))
        await first.stop()

        let second = try await start()
        let served = try await second.get("/imgproxy/\(signer.signature(of: path, pair: two))\(path)")
        #expect(served.status == 200 && served.body == made.body && served.header("ETag") == made.header("ETag"))
        let metrics = try await second.get("/metrics").text
        #expect(Self.encodes(metrics) == 0, "served from the store without an encode")
        #expect(metrics.contains("osprey_cache_hits_total{level=\"result_store\"} 1"))
        #expect(!metrics.contains("osprey_origin_fetches_total 1"), "the source was not fetched")
        // Now in the instance's own cache: the store is not asked again.
        #expect(try await second.get("/imgproxy/\(signer.signature(of: path, pair: one))\(path)").status == 200)
        #expect(try await second.get("/metrics").text.contains("osprey_result_store_total{outcome=\"hit\"} 1\n"))
        await second.stop()
        await moto.stop()
    }

    @Test("A stopped store does not fail requests: processed locally, counted and logged")
    func storeDown() async throws {
        let moto = try await MotoServer.start(buckets: ["results"])
        var s3 = moto.configuration()
        s3.timeout = .seconds(2)
        await moto.stop()
        try await expectServedWithoutStore(s3, side: 50)
    }

    @Test("A store that accepts connections and never answers costs its timeout, never the request")
    func storeSlow() async throws {
        // A listening socket nobody accepts from: connections complete, requests are never answered.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(listening && listen(fd, 64) == 0)
        var s3 = S3Configuration()
        s3.endpoint = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        s3.pathStyle = true
        s3.timeout = .seconds(1)
        try await expectServedWithoutStore(s3, side: 40)
    }

    /// A variant served with `s3` as a result store that cannot answer: 200 at `side` pixels wide,
    /// one failed lookup and one failed write counted.
    private func expectServedWithoutStore(_ s3: S3Configuration, side: Int) async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start {
            $0.s3 = s3
            $0.resultStore = S3Path("s3://results")
        }
        let reply = try await server.get("/unsafe/\(side)x\(side)/\(origin.address("/photo.jpg"))")
        #expect(reply.status == 200 && reply.image?.width == side)
        await server.server.flushCaches()
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_result_store_total{outcome=\"lookup_failed\"} 1"), "\(metrics)")
        #expect(metrics.contains("osprey_result_store_total{outcome=\"write_failed\"} 1"))
        await server.stop()
        await origin.stop()
    }
}
