import Foundation
import Hummingbird
import Osprey
import OspreyTestSupport
import Synchronization

/// A real HTTP origin on loopback (Hummingbird) serving solid-colour 4:3 PNGs, one colour per
/// item (`/color/<item>.png`), a slow answer (`/slow/<name>`, after 5 s), a gated body
/// (`/gated/<name>`: the body set by ``setBody(_:_:cut:)`` up to its cut, the rest when the test
/// opens gate `name`), a held colour (`/held/<item>.png`: the colour once the test opens gate
/// `held`) and 404s for anything else; it counts the requests per path and keeps the order of the
/// held ones.
final class ColorOrigin: Sendable {
    private struct State {
        var hits: [String: Int] = [:]
        var heldOrder: [Int] = []
        var task: Task<Void, any Error>?
        var port = 0
        var bodies: [String: (body: Data, cut: Int)] = [:]
        var openGates: Set<String> = []
        var gateWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Locked(State())

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(state.withLock { $0.port })\(path)")! }

    func itemURL(_ item: Int) -> URL { url("/color/\(item).png") }

    func hits(_ path: String) -> Int { state.withLock { $0.hits[path, default: 0] } }

    /// The items of the `/held/` requests, in the order they arrived.
    var heldOrder: [Int] { state.withLock { $0.heldOrder } }

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

    /// Sets the body `/gated/<name>` serves: its first `cut` bytes at once, the rest after
    /// ``openGate(_:)``.
    func setBody(_ name: String, _ body: Data, cut: Int) {
        state.withLock { $0.bodies[name] = (body, min(max(0, cut), body.count)) }
    }

    /// Opens gate `name`: the gated response waiting on it sends the rest of its body.
    func openGate(_ name: String) {
        let waiters = state.withLock { state in
            state.openGates.insert(name)
            return state.gateWaiters.removeValue(forKey: name) ?? []
        }
        waiters.forEach { $0.resume() }
    }

    private func waitForGate(_ name: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if state.openGates.contains(name) { return true }
                state.gateWaiters[name, default: []].append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    static func start() async throws -> ColorOrigin {
        let origin = ColorOrigin()
        let router = Router()
        router.get("**") { request, _ -> Response in
            let path = request.uri.path
            origin.state.withLock { $0.hits[path, default: 0] += 1 }
            if path.hasPrefix("/gated/"), let entry = origin.state.withLock({ $0.bodies[String(path.dropFirst("/gated/".count))] }) {
                let name = String(path.dropFirst("/gated/".count))
                let body = ResponseBody(contentLength: entry.body.count) { writer in
                    try await writer.write(ByteBuffer(bytes: entry.body.prefix(entry.cut)))
                    await origin.waitForGate(name)
                    try await writer.write(ByteBuffer(bytes: entry.body.dropFirst(entry.cut)))
                    try await writer.finish(nil)
                }
                return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
            } else if path.hasPrefix("/slow/") {
                try await Task.sleep(for: .seconds(5))
            } else if path.hasPrefix("/held/"), let item = Int(path.dropFirst("/held/".count).dropLast(".png".count)) {
                origin.state.withLock { $0.heldOrder.append(item) }
                await origin.waitForGate("held")
                let color = color(item)
                return Response(
                    status: .ok, headers: [.contentType: "image/png"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: try png(red: color.red, green: color.green, blue: color.blue))))
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
        let bound = try await withDeadline("the colour origin to listen on a loopback port") {
            var bound = 0
            for await value in ports { bound = value }
            return bound
        }
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
        let waiters = state.withLock { state in
            defer { state.gateWaiters.removeAll() }
            return state.gateWaiters.values.flatMap { $0 }
        }
        waiters.forEach { $0.resume() }
        guard let task = state.withLock({ $0.task }) else { return }
        task.cancel()
        _ = try? await withDeadline("the colour origin to stop") { _ = try? await task.value }
    }
}
