import Foundation
import Hummingbird
import Osprey
import Synchronization

/// A real HTTP origin on loopback (Hummingbird) serving solid-colour 4:3 PNGs, one colour per
/// item (`/color/<item>.png`), a slow answer (`/slow/<name>`, after 5 s) and 404s for anything
/// else; it counts the requests per path.
final class ColorOrigin: Sendable {
    private struct State {
        var hits: [String: Int] = [:]
        var task: Task<Void, any Error>?
        var port = 0
    }

    private let state = Locked(State())

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(state.withLock { $0.port })\(path)")! }

    func itemURL(_ item: Int) -> URL { url("/color/\(item).png") }

    func hits(_ path: String) -> Int { state.withLock { $0.hits[path, default: 0] } }

    /// Every path requested, with its count.
    var allHits: [String: Int] { state.withLock { $0.hits } }

    /// The colour of item `item`: 512 colours 32 levels apart in each channel.
    static func color(_ item: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        (UInt8(16 + (item % 8) * 32), UInt8(16 + (item / 8 % 8) * 32), UInt8(16 + (item / 64 % 8) * 32))
    }

    /// A 40×30 PNG of one colour.
    static func png(red: UInt8, green: UInt8, blue: UInt8) throws -> Data {
        let pixels: [UInt8] = (0..<(40 * 30)).flatMap { _ -> [UInt8] in [red, green, blue, 255] }
        return try Image(rgba: pixels, width: 40, height: 30).encoded(as: .png)
    }

    static func start() async throws -> ColorOrigin {
        let origin = ColorOrigin()
        let router = Router()
        router.get("**") { request, _ -> Response in
            let path = request.uri.path
            origin.state.withLock { $0.hits[path, default: 0] += 1 }
            if path.hasPrefix("/slow/") {
                try await Task.sleep(for: .seconds(5))
            } else if path.hasPrefix("/color/"), let item = Int(path.dropFirst("/color/".count).dropLast(".png".count)) {
                let color = color(item)
                let body = try png(red: color.red, green: color.green, blue: color.blue)
                var headers = HTTPFields()
                headers[.contentType] = "image/png"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
            return Response(status: .notFound)
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            })
        let task = Task {
            defer { continuation.finish() }
            try await app.runService()
        }
        var bound = 0
        for await value in ports { bound = value }
        guard bound > 0 else {
            task.cancel()
            throw HarnessError(message: "the colour origin could not bind a loopback port")
        }
        origin.state.withLock {
            $0.task = task
            $0.port = bound
        }
        return origin
    }

    func stop() async {
        let task = state.withLock { $0.task }
        task?.cancel()
        _ = try? await task?.value
    }
}
