import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP/1.1 origin on 127.0.0.1 serving bodies from memory by the request path's last
/// component (`/any/prefix/hopper.jpg?r=1` serves `hopper.jpg`, so a prefix or a query makes a new
/// URL for the same bytes), with `Content-Length` and keep-alive; unknown names answer 404. It
/// counts the bodies it served: ``hits`` in process, `GET /__hits` from another one (the benchmark
/// harness's origin process, `OspreyBench origin DIR...`). With `bytesPerSecond` it sends each body in
/// 16 KiB chunks at that rate (a slow link: `OspreyBench progressive`); with `log` it appends a line
/// `GET <path>` per request to that file (the gallery benchmark counts them). Shared by the
/// benchmarks and the tests.
public final class LoopbackOrigin: Sendable {
    /// The port it listens on.
    public let port: Int
    private let bodies: Mutex<[String: ByteBuffer]>
    private let served = Atomic<Int>(0)
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    /// The pause after each 16 KiB chunk of a body; nil: the body at once.
    fileprivate let pause: TimeAmount?
    /// Where each request's line goes; nil: nowhere.
    private let log: Mutex<FileHandle?>

    /// Starts an origin serving `bodies` (name → bytes) and every file of `directories` by its
    /// name, on `port` (0: any free port), on one event loop of its own; `bytesPerSecond` (default
    /// nil: at once) and `log` (default nil: none) as above.
    public static func start(
        bodies: [String: Data] = [:], directories: [URL] = [], port: Int = 0, bytesPerSecond: Int? = nil, log: URL? = nil
    ) async throws -> LoopbackOrigin {
        var files: [String: ByteBuffer] = [:]
        for directory in directories {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                if let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) {
                    files[name] = ByteBuffer(bytes: data)
                }
            }
        }
        for (name, data) in bodies { files[name] = ByteBuffer(bytes: data) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let origin = Box()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(LoopbackOriginHandler(origin: origin))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        let pause = bytesPerSecond.map { TimeAmount.nanoseconds(Int64(Double(LoopbackOriginHandler.chunk) / Double(max(1, $0)) * 1e9)) }
        let logHandle = try log.map { url -> FileHandle in
            if !FileManager.default.fileExists(atPath: url.path) { FileManager.default.createFile(atPath: url.path, contents: nil) }
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            return handle
        }
        let started = LoopbackOrigin(
            port: channel.localAddress?.port ?? 0, bodies: files, channel: channel, group: group, pause: pause, log: logHandle)
        origin.value.withLock { $0 = started }
        return started
    }

    private init(
        port: Int, bodies: [String: ByteBuffer], channel: any Channel, group: MultiThreadedEventLoopGroup, pause: TimeAmount?, log: FileHandle?
    ) {
        self.port = port
        self.pause = pause
        self.log = Mutex(log)
        self.bodies = Mutex(bodies)
        self.channel = channel
        self.group = group
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which starts with `/`).
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Serves `body` as `name` from now on.
    public func set(_ name: String, _ body: Data) { bodies.withLock { $0[name] = ByteBuffer(bytes: body) } }

    /// How many bodies (200 answers) it has served.
    public var hits: Int { served.load(ordering: .relaxed) }

    /// Closes the listening socket and stops the event loop.
    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func body(for path: Substring) -> ByteBuffer? {
        if path == "/__hits" { return ByteBuffer(string: "\(hits)") }
        log.withLock { try? $0?.write(contentsOf: Data("GET \(path)\n".utf8)) }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let body = bodies.withLock { $0[name] }
        if body != nil { served.add(1, ordering: .relaxed) }
        return body
    }

    /// The origin, set once it is bound (the handlers are made before).
    fileprivate final class Box: Sendable {
        let value = Mutex<LoopbackOrigin?>(nil)
    }
}

private final class LoopbackOriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    static let chunk = 16_384

    private let origin: LoopbackOrigin.Box
    private var head: HTTPRequestHead?

    init(origin: LoopbackOrigin.Box) { self.origin = origin }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/"
            let served = origin.value.withLock { $0 }
            let body = served?.body(for: path)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: Self.contentType(path))
            headers.add(name: "Content-Length", value: "\(body?.readableBytes ?? 0)")
            let keepAlive = head.isKeepAlive
            headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            let status: HTTPResponseStatus = body == nil ? .notFound : .ok
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            if let pause = served?.pause, let body {
                context.flush()
                return sendSlowly(context, body, pause: pause)
            }
            context.write(wrapOutboundOut(.body(.byteBuffer(body ?? ByteBuffer()))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { channel.close(promise: nil) }
            }
        }
    }

    /// The rest of `body` in chunks, one per `pause`, then the end.
    private func sendSlowly(_ context: ChannelHandlerContext, _ body: ByteBuffer, pause: TimeAmount) {
        guard context.channel.isActive else { return }
        var rest = body
        guard let chunk = rest.readSlice(length: min(Self.chunk, rest.readableBytes)), chunk.readableBytes > 0 else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let remaining = rest
        context.eventLoop.scheduleTask(in: pause) {
            let (handler, context) = bound.value
            handler.sendSlowly(context, remaining, pause: pause)
        }
    }

    private static func contentType(_ path: Substring) -> String {
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
