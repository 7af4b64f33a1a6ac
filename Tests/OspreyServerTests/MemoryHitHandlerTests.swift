import Foundation
import NIOCore
import NIOPosix
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Memory hits answered on the event loop (MemoryHitHandler)", .serialized, .timeLimit(.minutes(3)))
struct MemoryHitHandlerTests {
    func eventLoopHits(_ server: ServerHarness) async throws -> Int {
        let text = try await server.get("/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("osprey_event_loop_hits_total ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    }

    @Test("a memory hit is answered on the event loop with the answer Hummingbird gives: headers, body, HEAD, 304")
    func sameAnswer() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start { $0.instanceName = "fast-1" }
        defer {
            Task {
                await server.stop()
                await origin.stop()
            }
        }
        let path = "/unsafe/fit-in/64x64/filters:format(png)/\(origin.address("/photo.jpg"))"
        let miss = try await server.get(path)
        #expect(miss.status == 200)
        #expect(try await eventLoopHits(server) == 0)
        let hit = try await server.get(path)
        #expect(try await eventLoopHits(server) == 1)
        #expect(hit.body == miss.body)
        for name in ["content-type", "content-length", "etag", "last-modified", "cache-control", "x-osprey-instance", "server"] {
            #expect(hit.header(name) == miss.header(name), "\(name)")
        }
        #expect(hit.header("date") != nil && hit.header("vary") == nil)
        let etag = try #require(hit.header("etag"))
        let notModified = try await server.get(path, headers: [("If-None-Match", "W/\(etag)")])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.header("etag") == etag)
        #expect(try await eventLoopHits(server) == 2)
        // Negotiated (no format in the URL): Vary: Accept, the format of the Accept header's result.
        let negotiated = "/unsafe/fit-in/64x64/\(origin.address("/photo.jpg"))"
        _ = try await server.get(negotiated, headers: [("Accept", "image/webp")])
        let webp = try await server.get(negotiated, headers: [("Accept", "image/webp")])
        #expect(webp.header("content-type") == "image/webp" && webp.header("vary") == "Accept")
        #expect(try await eventLoopHits(server) == 3)
        // A request with a Connection header goes on to Hummingbird (which closes on `close`).
        let closing = try await server.get(path, headers: [("Connection", "close")])
        #expect(closing.status == 200 && closing.body == miss.body)
        #expect(try await eventLoopHits(server) == 3)
    }

    @Test("pipelined requests are answered in order: a hit behind a slow miss waits for it")
    func pipelinedOrder() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/slow.jpg", body: TestImages.photo, delay: .milliseconds(400))
        let server = try await ServerHarness.start()
        defer {
            Task {
                await server.stop()
                await origin.stop()
            }
        }
        let hitPath = "/unsafe/fit-in/32x32/filters:format(jpeg)/\(origin.address("/photo.jpg"))"
        _ = try await server.get(hitPath)
        let missPath = "/unsafe/fit-in/32x32/filters:format(png)/\(origin.address("/slow.jpg"))"
        let request =
            [missPath, hitPath].map { "GET \($0) HTTP/1.1\r\nHost: localhost\r\n\r\n" }.joined()
            + "GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        let answer = try await RawHTTP.exchange(port: server.port, request: request)
        let png = try #require(answer.range(of: "Content-Type: image/png", options: .caseInsensitive))
        let jpeg = try #require(answer.range(of: "Content-Type: image/jpeg", options: .caseInsensitive))
        #expect(png.lowerBound < jpeg.lowerBound, "the hit was answered before the miss in front of it")
        #expect(answer.components(separatedBy: "HTTP/1.1 200").count == 4, "three answers")
        #expect(try await eventLoopHits(server) == 0, "a hit behind a pending request goes on to Hummingbird")
    }
}

extension MemoryHitHandlerTests {
    @Test("every pipelined request is answered in order and the one that asks closes: 30 rounds of misses, hits and a close")
    func pipelinedRounds() async throws {
        let origin = try await LoopbackOrigin.start()
        let server = try await ServerHarness.start()
        defer {
            Task {
                await server.stop()
                await origin.stop()
            }
        }
        origin.set("/photo.jpg", body: TestImages.photo)
        let hitPath = "/unsafe/fit-in/24x24/filters:format(jpeg)/\(origin.address("/photo.jpg"))"
        _ = try await server.get(hitPath)
        for round in 0..<30 {
            // A fresh miss each round (its own source path), slow or not; a hit before, after or between.
            origin.set("/miss-\(round).jpg", body: TestImages.photo, delay: round.isMultiple(of: 2) ? .milliseconds(50) : nil)
            let missPath = "/unsafe/fit-in/24x24/filters:format(png)/\(origin.address("/miss-\(round).jpg"))"
            let paths =
                switch round % 3 {
                case 0: [missPath, hitPath, hitPath]
                case 1: [hitPath, missPath, hitPath]
                default: [hitPath, hitPath, missPath]
                }
            let request =
                paths.map { "GET \($0) HTTP/1.1\r\nHost: localhost\r\n\r\n" }.joined()
                + "GET /health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            let answer = try await RawHTTP.exchange(port: server.port, request: request, within: .seconds(30))
            let types = answer.components(separatedBy: "\r\n").compactMap { line -> String? in
                let lower = line.lowercased()
                return lower.hasPrefix("content-type: image/") ? String(lower.dropFirst("content-type: image/".count)) : nil
            }
            let expected = paths.map { $0 == missPath ? "png" : "jpeg" }
            #expect(types == expected, "round \(round): the answers' order")
            #expect(answer.components(separatedBy: "HTTP/1.1 200").count == 5, "round \(round): four answers")
        }
    }
}

/// Sends raw bytes on one connection and returns everything the server sends until it closes.
enum RawHTTP {
    /// Fails with ``DeadlineExceeded`` when the server has not answered and closed within `limit`
    /// (default 60 seconds); the connection is then closed.
    static func exchange(port: Int, request: String, within limit: Duration = .seconds(60)) async throws -> String {
        let firstLine = request.prefix { $0 != "\r" }
        return try await withDeadline("the answers to `\(firstLine)`... and the close of the connection to port \(port)", within: limit) {
            let group = MultiThreadedEventLoopGroup.singleton
            let promise = group.next().makePromise(of: String.self)
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(promise: promise)) }
                }
                .connect(host: "127.0.0.1", port: port).get()
            return try await withTaskCancellationHandler {
                try await channel.writeAndFlush(ByteBuffer(string: request)).get()
                return try await promise.futureResult.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        }
    }

    /// Collects the bytes read until the connection closes.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private var text = ""
        private let promise: EventLoopPromise<String>

        init(promise: EventLoopPromise<String>) { self.promise = promise }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            text += String(buffer: unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) { promise.succeed(text) }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }
    }
}
