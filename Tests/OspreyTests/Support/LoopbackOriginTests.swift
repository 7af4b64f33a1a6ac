import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import OspreyTestSupport
import Testing

@testable import Osprey

/// The soak's misbehaving routes of the one loopback origin (the soak itself is not run in CI) and
/// the mutations it serves.
@Suite("Loopback origin: the soak's faults and mutations", .timeLimit(.minutes(2)))
struct LoopbackOriginTests {
    private static func get(_ url: URL) async throws -> (status: UInt, headers: HTTPHeaders, body: Data) {
        try await withDeadline("the origin's answer to \(url)") {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 24)
            return (response.status.code, response.headers, Data(body.readableBytesView))
        }
    }

    @Test("faults answer as documented: validators, cut bodies, lying lengths, a reset, a 503 with Retry-After, a loop")
    func faults() async throws {
        let jpeg = try TestData.data("hopper.jpg")
        let origin = try await LoopbackOrigin.start(bodies: ["hopper.jpg": jpeg])
        defer { Task { await origin.stop() } }
        let image = try await Self.get(origin.url("/img/any/hopper.jpg"))
        #expect(image.status == 200 && image.body == jpeg)
        #expect(image.headers["ETag"] == ["\"\(jpeg.count)\""] && image.headers["Cache-Control"] == ["max-age=3600"])
        #expect(try await Self.get(origin.url("/broken/head/hopper.jpg")).body == jpeg.prefix(64))
        #expect(try await Self.get(origin.url("/broken/half/hopper.jpg")).body == jpeg.prefix(jpeg.count / 2))
        let busy = try await Self.get(origin.url("/status/503/hopper.jpg"))
        #expect(busy.status == 503 && busy.headers["Retry-After"] == ["1"])
        // A 302 to itself: async-http-client, which follows redirects, sees the cycle.
        await #expect(throws: HTTPClientError.redirectCycleDetected) { try await Self.get(origin.url("/loop/hopper.jpg")) }
        for fault in ["reset0", "reset", "trunc", "cl-big"] {
            await #expect(throws: (any Error).self, "\(fault) fails the request") { try await Self.get(origin.url("/\(fault)/hopper.jpg")) }
        }
        #expect(try await Self.get(origin.url("/mut/7/missing.jpg")).status == 404)
        #expect(origin.bodiesServed == 0, "fault routes are not rule 3's bodies")
    }

    @Test("mutations are the same for the same seed, damage the image, and never crash the decoder")
    func mutations() async throws {
        let png = try TestData.data("hopper.png")
        for seed in 0..<60 {
            let mutated = Mutation.mutate(png, seed: seed)
            #expect(mutated == Mutation.mutate(png, seed: seed))
            #expect(mutated != png, "seed \(seed) changed nothing")
            _ = try? Image(data: mutated)
        }
        // A size lie (seed 3: PNG IHDR) keeps a valid CRC, so a decoder reads the lie, not a checksum error.
        #expect(throws: OspreyError.self) { try Image(data: Mutation.mutate(png, seed: 3)) }
        let origin = try await LoopbackOrigin.start(bodies: ["hopper.png": png])
        defer { Task { await origin.stop() } }
        #expect(try await Self.get(origin.url("/mut/13/hopper.png")).body == Mutation.mutate(png, seed: 13))
    }
}
