import AsyncHTTPClient
import Foundation
import NIOCore
import Osprey
import OspreyServer
import OspreyTestSupport
import ServiceLifecycle
import Testing

/// One `osprey serve` on a free loopback port, run through its service group.
struct ServerHarness: Sendable {
    let server: OspreyServer
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let port: Int

    struct Reply: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
        func header(_ name: String) -> String? { headers[name.lowercased()] }
        var text: String { String(decoding: body, as: UTF8.self) }
        /// The body decoded as an image (nil when it is not one).
        var image: Image? { try? Image(data: body) }
    }

    /// Starts a server with loopback sources allowed, configured further by `configure`.
    static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> ServerHarness {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.allowLoopbackSources = true
        configure(&configuration)
        let server = OspreyServer(configuration: configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = server.makeServiceGroup(signals: []) { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        let port = try await withDeadline("osprey serve to listen on a loopback port") {
            var port = 0
            for await value in ports { port = value }
            return port
        }
        guard port > 0 else { throw OriginError(message: "the server did not start") }
        return ServerHarness(server: server, group: group, task: task, port: port)
    }

    func get(_ path: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(60)) async throws -> Reply {
        try await ServerHarnessClient(port: port).get(path, headers: headers, timeout: timeout)
    }

    /// How many sources the server has decoded for results, from `/metrics`
    /// (`osprey_decodes_total`, both labels).
    func decodes() async throws -> Int {
        let text = try await get("/metrics").text
        return text.split(separator: "\n").filter { $0.hasPrefix("osprey_decodes_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
    }

    /// Shuts the server down gracefully; records an issue when it has not stopped within 60 seconds.
    func stop() async {
        await group.triggerGracefulShutdown()
        let task = self.task
        do {
            try await withDeadline("osprey serve on port \(port) to shut down") { _ = try? await task.value }
        } catch {
            Issue.record(error)
        }
    }
}

/// Requests to a server on a loopback port.
struct ServerHarnessClient: Sendable {
    let port: Int

    typealias Reply = ServerHarness.Reply

    func get(_ path: String, headers: [(String, String)] = [], timeout: TimeAmount = .seconds(60)) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 64 << 20)
        var fields: [String: String] = [:]
        for header in response.headers { fields[header.name.lowercased()] = header.value }
        return Reply(status: Int(response.status.code), headers: fields, body: Data(buffer: body))
    }
}

/// Test images made with Osprey itself.
enum TestImages {
    /// A 400x300 JPEG with a gradient and a bright square (so smart crop has something to find).
    static let photo: Data = make(width: 400, height: 300, alpha: false, format: .jpeg)
    /// A 200x100 PNG with an alpha channel.
    static let transparentPNG: Data = make(width: 200, height: 100, alpha: true, format: .png)

    /// A file of the repository's test images (``FixtureImages``): `$OSPREY_TESTDATA`, else
    /// `Tests/Fixtures/images`.
    static func shared(_ name: String) throws -> Data { try FixtureImages.data(name) }

    static func make(width: Int, height: Int, alpha: Bool, format: ImageFormat) -> Data {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 4
                let square = x > width / 2 && x < width * 3 / 4 && y > height / 4 && y < height / 2
                pixels[index] = square ? 250 : UInt8(x * 255 / width)
                pixels[index + 1] = square ? 40 : UInt8(y * 255 / height)
                pixels[index + 2] = square ? 40 : 128
                pixels[index + 3] = alpha ? UInt8(x * 255 / width) : 255
            }
        }
        return try! Image(rgba: pixels, width: width, height: height).encoded(as: format, quality: 90)
    }
}
