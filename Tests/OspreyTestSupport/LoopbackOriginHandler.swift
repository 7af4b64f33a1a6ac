import Foundation
import NIOCore
import NIOHTTP1

/// One connection of ``LoopbackOrigin``: picks the rule for each request (see the origin's
/// documentation) and writes the answer. All its methods run on the channel's event loop.
final class LoopbackOriginHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    /// The piece a named body sent at a rate goes in.
    static let chunk = 16_384

    private let box: LoopbackOrigin.Box
    private var head: HTTPRequestHead?
    /// The URI whose response is in progress.
    private var inProgress: String?
    private var keepAlive = true

    init(origin: LoopbackOrigin.Box) { self.box = origin }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head, let origin = box.value.withLock({ $0 }) else { return }
            self.head = nil
            respond(context, origin, head)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let uri = inProgress, let origin = box.value.withLock({ $0 }) {
            inProgress = nil
            origin.update {
                $0.aborted.append(uri)
                $0.inFlight -= 1
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(_ context: ChannelHandlerContext, _ origin: LoopbackOrigin, _ head: HTTPRequestHead) {
        let uri = head.uri
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/"
        var requestHeaders: [String: String] = [:]
        for (name, value) in head.headers { requestHeaders[name.lowercased()] = value }
        inProgress = uri
        keepAlive = head.isKeepAlive
        origin.logRequest(path)
        origin.update { snapshot in
            snapshot.hits[uri, default: 0] += 1
            snapshot.pathHits[String(path), default: 0] += 1
            snapshot.log.append(uri)
            snapshot.headers[uri] = requestHeaders
            if let host = requestHeaders["host"] { snapshot.hosts[String(path)] = host }
            snapshot.inFlight += 1
            snapshot.maxInFlight = max(snapshot.maxInFlight, snapshot.inFlight)
        }
        if let resource = origin.resource(path) {
            return after(context, resource.delay.map(Self.amount)) { handler, context in
                handler.answer(context, origin, resource, path: path, requestHeaders: requestHeaders)
            }
        }
        let parts = path.split(separator: "/").map(String.init)
        let route = LoopbackRoute(origin: origin, handler: self, context: context, uri: uri, parts: parts, headers: requestHeaders)
        if !route.run() { plain(context, origin, path) }
    }

    /// Rule 1: `resource`, or `304` to a conditional request its validators match.
    private func answer(
        _ context: ChannelHandlerContext, _ origin: LoopbackOrigin, _ resource: LoopbackOrigin.Resource, path: Substring,
        requestHeaders: [String: String]
    ) {
        let etag = resource.headers.first { $0.key.lowercased() == "etag" }?.value
        let lastModified = resource.headers.first { $0.key.lowercased() == "last-modified" }?.value
        let notModified =
            resource.status == 200
            && (etag.map { requestHeaders["if-none-match"] == $0 } ?? lastModified.map { requestHeaders["if-modified-since"] == $0 } ?? false)
        let status = notModified ? 304 : resource.status
        origin.update { $0.statuses[String(path), default: [:]][status, default: 0] += 1 }
        let headers = resource.headers.map { ($0.key, $0.value) }
        if notModified {
            send(context, status: 304, headers: headers.filter { $0.0.lowercased() != "content-type" }, body: Data())
        } else {
            send(context, status: status, headers: headers, body: resource.body)
        }
    }

    /// Rule 3: the generated or named body, at the origin's rate if it has one; else `404`.
    func plain(_ context: ChannelHandlerContext, _ origin: LoopbackOrigin, _ path: Substring) {
        guard let body = origin.plainBody(path) else {
            origin.update { $0.statuses[String(path), default: [:]][404, default: 0] += 1 }
            return notFound(context)
        }
        origin.update { $0.statuses[String(path), default: [:]][200, default: 0] += 1 }
        writeHead(context, status: 200, headers: [("Content-Type", Self.contentType(path)), ("Content-Length", "\(body.readableBytes)")])
        guard let pause = origin.pause else {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            return end(context)
        }
        context.flush()
        sendSlowly(context, body: Data(body.readableBytesView), from: 0, chunk: Self.chunk, pause: pause)
    }

    func notFound(_ context: ChannelHandlerContext) {
        send(context, status: 404, headers: [("Content-Type", "text/plain")], body: Data("not found".utf8))
    }

    /// Runs `action` after `delay` (at once when nil) on the event loop.
    func after(
        _ context: ChannelHandlerContext, _ delay: TimeAmount?, _ action: @escaping (LoopbackOriginHandler, ChannelHandlerContext) -> Void
    ) {
        guard let delay else { return action(self, context) }
        let bound = NIOLoopBound((self, context, action), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: delay) {
            let (handler, context, action) = bound.value
            if context.channel.isActive { action(handler, context) }
        }
    }

    /// Runs `action` on the event loop once `gate` opens, if the response is still in progress.
    func whenOpen(
        _ context: ChannelHandlerContext, _ origin: LoopbackOrigin, gate: String,
        _ action: @escaping (LoopbackOriginHandler, ChannelHandlerContext) -> Void
    ) {
        let uri = inProgress
        let bound = NIOLoopBound((self, context, action), eventLoop: context.eventLoop)
        origin.whenOpen(gate) {
            bound.eventLoop.execute {
                let (handler, context, action) = bound.value
                guard handler.inProgress == uri else { return }
                action(handler, context)
            }
        }
    }

    /// Sends `body` from `offset`, `chunk` bytes with a pause after each, while the request is in
    /// progress (a client that hangs up stops it).
    func sendSlowly(_ context: ChannelHandlerContext, body: Data, from offset: Int, chunk: Int, pause: TimeAmount) {
        guard inProgress != nil else { return }
        guard offset < body.count else { return end(context) }
        let next = min(body.count, offset + chunk)
        writeBody(context, body[offset..<next], flush: true)
        after(context, pause) { handler, context in handler.sendSlowly(context, body: body, from: next, chunk: chunk, pause: pause) }
    }

    func send(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)], body: Data) {
        writeHead(context, status: status, headers: headers + [("Content-Length", "\(body.count)")])
        if !body.isEmpty { writeBody(context, body, flush: false) }
        end(context)
    }

    func writeHead(_ context: ChannelHandlerContext, status: Int, headers: [(String, String)]) {
        var fields = HTTPHeaders(headers)
        if !keepAlive { fields.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: fields)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    func writeBody<Bytes: DataProtocol>(_ context: ChannelHandlerContext, _ bytes: Bytes, flush: Bool) {
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        if flush { context.flush() }
    }

    /// Ends the response in progress (closing the connection when the client asked to).
    func end(_ context: ChannelHandlerContext) {
        let channel = context.channel
        let close = !keepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if close { channel.close(promise: nil) }
        }
        guard let uri = inProgress else { return }
        inProgress = nil
        box.value.withLock { $0 }?.update {
            $0.inFlight -= 1
            $0.completed[uri, default: 0] += 1
        }
    }

    /// Closes the connection now (a route that drops or hangs up).
    func drop(_ context: ChannelHandlerContext) {
        context.flush()
        context.close(promise: nil)
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    static func contentType(_ path: Substring) -> String {
        switch path.split(separator: ".").last?.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "avif": "image/avif"
        default: "application/octet-stream"
        }
    }
}
