import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import OspreyTestSupport
import Synchronization

@testable import Osprey

/// The images used by the loading tests, from ``TestData``.
enum LoadingTestData {
    static let imagesDirectory: URL = TestData.imagesDirectory

    static let hopperJPEG: Data = {
        (try? Data(contentsOf: imagesDirectory.appendingPathComponent("hopper.jpg"))) ?? Data()
    }()
}

/// A small HTTP/1.1 server on 127.0.0.1 (random port) with endpoints for the downloader tests.
///
/// Routes (the first path component picks the route; the rest only makes URLs distinct):
/// - `/image/…`: hopper.jpg with `Content-Length`.
/// - `/gated/<gate>/…`: the head and the first 100 bytes, then the rest once `<gate>` is opened.
/// - `/gatedchunked/<gate>/…`: like `/gated` without `Content-Length`, 2 KiB before the gate.
/// - `/chunked/…`: hopper.jpg in 1 KiB chunks, no `Content-Length`.
/// - `/status/<code>`: that status with a short text body.
/// - `/html/…`: `200` with an HTML page.
/// - `/redirect/<n>`: `302` to `/redirect/<n-1>`; `/redirect/0` is the image.
/// - `/flaky/<name>?fail=<k>&code=<c>`: the first k hits answer c (`Retry-After: 0`), then the image.
/// - `/resumable/<name>`: `Accept-Ranges: bytes`, `ETag: "v1"`; the first hit drops the connection
///   after half the body; later hits honour `Range` + `If-Range` with `206`.
/// - `/gatedresumable/<gate>/…`: like `/gated` with `Accept-Ranges` and `ETag: "v1"`; honours
///   `Range` + `If-Range` with `206`.
/// - `/conditional/…`: `304` when `If-None-Match: "v1"`, else the image with `ETag: "v1"`.
/// - `/drop/…`: the head and half the body, then the connection is closed.
/// - `/hangup/<name>?times=<k>`: the first k hits close the connection without answering (as a
///   server closing a reused keep-alive connection), then the image.
/// - `/auth/…`: the image when `Authorization` is `Basic dXNlcjpwYXNz` (user:pass), else `401`.
/// - `/paced/<name>/…`: the body set with ``setBody(_:_:cuts:)`` with `Content-Length`, in pieces
///   cut at `cuts`: the head at once, piece `i` (from 0) once gate `<name>-<i>` is opened.
///   Deterministic: the test decides when each piece goes.
/// - `/slow/<name>/…?chunk=<bytes>&pause=<ms>`: that body with `Content-Length`, `chunk` bytes
///   (default 4096) at a time with a pause of `pause` ms (default 50) after each: a slow link.
final class LoopbackServer: Sendable {
    struct Snapshot: Sendable {
        /// Requests per URI (path and query).
        var hits: [String: Int] = [:]
        /// URIs in the order their requests arrived.
        var log: [String] = []
        /// Responses in progress now, and the most ever at once.
        var inFlight = 0
        var maxInFlight = 0
        /// URIs whose connection closed before their response was complete.
        var aborted: [String] = []
        /// The request headers last seen per URI.
        var headers: [String: [String: String]] = [:]
        /// Completed responses per URI.
        var completed: [String: Int] = [:]
        /// Connections accepted (whether or not a request came on them).
        var connections = 0
    }

    private struct State {
        var snapshot = Snapshot()
        var openGates: Set<String> = []
        var gateWaiters: [String: [@Sendable () -> Void]] = [:]
        var waiters: [(id: Int, predicate: @Sendable (Snapshot) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter = 0
        /// Bodies of `/paced` and `/slow`, by name, with the offsets `/paced` cuts them at.
        var bodies: [String: (body: Data, cuts: [Int])] = [:]
    }

    private let state = Locked(State())
    private let channel: Locked<Channel?> = Locked(nil)
    let image = LoadingTestData.hopperJPEG
    private let boundPort = Atomic<Int>(0)
    /// The port the server listens on.
    var port: Int { boundPort.load(ordering: .acquiring) }

    private init() {}

    /// Starts a server.
    static func start() async throws -> LoopbackServer {
        let server = LoopbackServer()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                server.update { $0.connections += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(LoopbackHandler(server: server))
                }
            }
        let channel = try await withDeadline("the loopback server to bind a port") { try await bootstrap.bind(host: "127.0.0.1", port: 0).get() }
        server.boundPort.store(channel.localAddress?.port ?? 0, ordering: .releasing)
        server.channel.withLock { $0 = channel }
        return server
    }

    func shutdown() async {
        let channel = self.channel.withLock { $0 }
        try? await channel?.close()
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        waiters.forEach { $0.resume(returning: false) }
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }
    func hits(_ uri: String) -> Int { snapshot.hits[uri, default: 0] }

    /// Sets the body `/paced/<name>` and `/slow/<name>` serve; `/paced` cuts it at `cuts`
    /// (ascending offsets inside the body).
    func setBody(_ name: String, _ body: Data, cuts: [Int] = []) {
        state.withLock { $0.bodies[name] = (body, cuts.filter { $0 > 0 && $0 < body.count }) }
    }

    fileprivate func body(_ name: String) -> (body: Data, cuts: [Int])? {
        state.withLock { $0.bodies[name] }
    }

    /// Opens a gate: gated responses waiting on it send the rest of their body.
    func openGate(_ name: String) {
        let waiters = state.withLock { state in
            state.openGates.insert(name)
            return state.gateWaiters.removeValue(forKey: name) ?? []
        }
        waiters.forEach { $0() }
    }

    /// Waits until `predicate` holds for the server's state. Returns `false` if it did not within
    /// 30 s (a safety net so a broken test fails instead of hanging; no test relies on it).
    func waitUntil(_ predicate: @escaping @Sendable (Snapshot) -> Bool) async -> Bool {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let safety = Task {
            try await Task.sleep(for: .seconds(30))
            self.resumeWaiter(id, with: false)
        }
        defer { safety.cancel() }
        return await withCheckedContinuation { continuation in
            let satisfied = state.withLock { state in
                if predicate(state.snapshot) { return true }
                state.waiters.append((id, predicate, continuation))
                return false
            }
            if satisfied { continuation.resume(returning: true) }
        }
    }

    private func resumeWaiter(_ id: Int, with value: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume(returning: value)
    }

    /// Changes the snapshot and wakes the waiters whose predicates now hold.
    fileprivate func update(_ change: (inout Snapshot) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            change(&state.snapshot)
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(state.snapshot) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Runs `action` when `gate` is open (at once if it already is).
    fileprivate func whenOpen(_ gate: String, _ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            if state.openGates.contains(gate) { return true }
            state.gateWaiters[gate, default: []].append(action)
            return false
        }
        if runNow { action() }
    }
}

/// One connection's handler. All its methods run on the channel's event loop.
private final class LoopbackHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: LoopbackServer
    var head: HTTPRequestHead?
    var inProgress: String?

    init(server: LoopbackServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(context: context, head: head)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let uri = inProgress {
            inProgress = nil
            server.update {
                $0.aborted.append(uri)
                $0.inFlight -= 1
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let uri = head.uri
        var requestHeaders: [String: String] = [:]
        for (name, value) in head.headers { requestHeaders[name.lowercased()] = value }
        inProgress = uri
        server.update { snapshot in
            snapshot.hits[uri, default: 0] += 1
            snapshot.log.append(uri)
            snapshot.headers[uri] = requestHeaders
            snapshot.inFlight += 1
            snapshot.maxInFlight = max(snapshot.maxInFlight, snapshot.inFlight)
        }
        let components = URLComponents(string: uri)
        let parts = (components?.path ?? uri).split(separator: "/").map(String.init)
        let query = Dictionary((components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let image = server.image
        let jpeg: [(String, String)] = [("Content-Type", "image/jpeg")]

        switch parts.first ?? "" {
        case "image":
            send(context, status: 200, headers: jpeg, body: image)
        case "gated":
            let gate = parts.count > 1 ? parts[1] : "default"
            writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(image.count)")])
            writeBody(context, image.prefix(100), flush: true)
            finishWhenOpen(context, gate: gate, uri: uri, rest: image.dropFirst(100))
        case "gatedchunked":
            let gate = parts.count > 1 ? parts[1] : "default"
            writeHead(context, status: 200, headers: jpeg)
            writeBody(context, image.prefix(2048), flush: true)
            finishWhenOpen(context, gate: gate, uri: uri, rest: image.dropFirst(2048))
        case "chunked":
            writeHead(context, status: 200, headers: jpeg)
            var offset = 0
            while offset < image.count {
                writeBody(context, image[offset..<min(offset + 1024, image.count)], flush: true)
                offset += 1024
            }
            end(context, uri: uri)
        case "status":
            let code = parts.count > 1 ? Int(parts[1]) ?? 500 : 500
            send(context, status: code, headers: [("Content-Type", "text/plain")], body: Data("status \(code)".utf8))
        case "html":
            send(context, status: 200, headers: [("Content-Type", "text/html")], body: Data("<html><body>not an image</body></html>".utf8))
        case "redirect":
            let n = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            if n <= 0 {
                send(context, status: 200, headers: jpeg, body: image)
            } else {
                send(context, status: 302, headers: [("Location", "/redirect/\(n - 1)")], body: Data())
            }
        case "flaky":
            let failures = Int(query["fail"] ?? "1") ?? 1
            let code = Int(query["code"] ?? "503") ?? 503
            if server.hits(uri) <= failures {
                send(context, status: code, headers: [("Retry-After", "0")], body: Data("try again".utf8))
            } else {
                send(context, status: 200, headers: jpeg, body: image)
            }
        case "resumable":
            let common = jpeg + [("Accept-Ranges", "bytes"), ("ETag", "\"v1\"")]
            if server.hits(uri) == 1 {
                writeHead(context, status: 200, headers: common + [("Content-Length", "\(image.count)")])
                writeBody(context, image.prefix(image.count / 2), flush: true)
                context.close(promise: nil)
            } else if let start = Self.resumeOffset(requestHeaders, length: image.count) {
                let headers = common + [("Content-Range", "bytes \(start)-\(image.count - 1)/\(image.count)")]
                send(context, status: 206, headers: headers, body: image.dropFirst(start))
            } else {
                send(context, status: 200, headers: common, body: image)
            }
        case "gatedresumable":
            let gate = parts.count > 1 ? parts[1] : "default"
            let common = jpeg + [("Accept-Ranges", "bytes"), ("ETag", "\"v1\"")]
            if let start = Self.resumeOffset(requestHeaders, length: image.count) {
                let headers = common + [("Content-Range", "bytes \(start)-\(image.count - 1)/\(image.count)")]
                send(context, status: 206, headers: headers, body: image.dropFirst(start))
                return
            }
            writeHead(context, status: 200, headers: common + [("Content-Length", "\(image.count)")])
            writeBody(context, image.prefix(100), flush: true)
            finishWhenOpen(context, gate: gate, uri: uri, rest: image.dropFirst(100))
        case "conditional":
            if requestHeaders["if-none-match"] == "\"v1\"" {
                send(context, status: 304, headers: [("ETag", "\"v1\"")], body: Data())
            } else {
                send(context, status: 200, headers: jpeg + [("ETag", "\"v1\"")], body: image)
            }
        case "maxage":
            // /maxage/<seconds>/…: an ETag and `Cache-Control: max-age=<seconds>`; 304 to a match.
            let headers = [("ETag", "\"v1\""), ("Cache-Control", "max-age=\(parts.count > 1 ? parts[1] : "0")")]
            if requestHeaders["if-none-match"] == "\"v1\"" {
                send(context, status: 304, headers: headers, body: Data())
            } else {
                send(context, status: 200, headers: jpeg + headers, body: image)
            }
        case "drop":
            writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(image.count)")])
            writeBody(context, image.prefix(image.count / 2), flush: true)
            context.close(promise: nil)
        case "hangup":
            if server.hits(uri) <= Int(query["times"] ?? "1") ?? 1 {
                context.close(promise: nil)
            } else {
                send(context, status: 200, headers: jpeg, body: image)
            }
        case "auth":
            if requestHeaders["authorization"] == "Basic dXNlcjpwYXNz" {
                send(context, status: 200, headers: jpeg, body: image)
            } else {
                send(context, status: 401, headers: [("WWW-Authenticate", "Basic realm=\"osprey\"")], body: Data("no".utf8))
            }
        case "paced":
            guard parts.count > 1, let entry = server.body(parts[1]) else { return notFound(context) }
            let body = entry.body
            writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(body.count)")])
            context.flush()
            let edges = [0] + entry.cuts + [body.count]
            sendPiece(context, name: parts[1], index: 0, edges: edges, body: body, uri: uri)
        case "slow":
            guard parts.count > 1, let body = server.body(parts[1])?.body else { return notFound(context) }
            writeHead(context, status: 200, headers: jpeg + [("Content-Length", "\(body.count)")])
            let chunk = max(1, Int(query["chunk"] ?? "4096") ?? 4096)
            let pause = TimeAmount.milliseconds(Int64(query["pause"] ?? "50") ?? 50)
            sendSlowly(context, body: body, from: 0, chunk: chunk, pause: pause, uri: uri)
        default:
            notFound(context)
        }
    }

    private func notFound(_ context: ChannelHandlerContext) {
        send(context, status: 404, headers: [("Content-Type", "text/plain")], body: Data("not found".utf8))
    }

    /// Sends piece `index` of `body` (between `edges[index]` and `edges[index + 1]`) once gate
    /// `<name>-<index>` opens, then the next; ends the response after the last.
    private func sendPiece(_ context: ChannelHandlerContext, name: String, index: Int, edges: [Int], body: Data, uri: String) {
        guard index + 1 < edges.count else { return end(context, uri: uri) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        server.whenOpen("\(name)-\(index)") {
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                guard handler.inProgress == uri else { return }
                handler.writeBody(context, body[edges[index]..<edges[index + 1]], flush: true)
                handler.sendPiece(context, name: name, index: index + 1, edges: edges, body: body, uri: uri)
            }
        }
    }

    /// Sends `body` from `offset`, `chunk` bytes with a pause after each, while the request is in
    /// progress (a client that hangs up stops it).
    private func sendSlowly(_ context: ChannelHandlerContext, body: Data, from offset: Int, chunk: Int, pause: TimeAmount, uri: String) {
        guard inProgress == uri else { return }
        guard offset < body.count else { return end(context, uri: uri) }
        let next = min(body.count, offset + chunk)
        writeBody(context, body[offset..<next], flush: true)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: pause) {
            let (handler, context) = bound.value
            handler.sendSlowly(context, body: body, from: next, chunk: chunk, pause: pause, uri: uri)
        }
    }

    /// Sends `rest` and ends the response once `gate` opens (if this request is still in progress).
    private func finishWhenOpen(_ context: ChannelHandlerContext, gate: String, uri: String, rest: Data) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        server.whenOpen(gate) {
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                guard handler.inProgress == uri else { return }
                handler.writeBody(context, rest, flush: false)
                handler.end(context, uri: uri)
            }
        }
    }

    /// The start of a satisfiable `Range: bytes=N-` request validated by `If-Range: "v1"`, else `nil`.
    private static func resumeOffset(_ headers: [String: String], length: Int) -> Int? {
        guard let range = headers["range"], range.hasPrefix("bytes="), headers["if-range"] == "\"v1\"",
            let start = Int(range.dropFirst(6).prefix { $0.isNumber }), start < length
        else { return nil }
        return start
    }

    private func send(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)], body: Data) {
        writeHead(context, status: status, headers: headers + [("Content-Length", "\(body.count)")])
        if !body.isEmpty { writeBody(context, body, flush: false) }
        end(context, uri: inProgress ?? "")
    }

    private func writeHead(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)]) {
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    fileprivate func writeBody<Bytes: DataProtocol>(_ context: ChannelHandlerContext, _ bytes: Bytes, flush: Bool) {
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        if flush { context.flush() }
    }

    fileprivate func end(_ context: ChannelHandlerContext, uri: String) {
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if inProgress == uri {
            inProgress = nil
            server.update {
                $0.inFlight -= 1
                $0.completed[uri, default: 0] += 1
            }
        }
    }
}
