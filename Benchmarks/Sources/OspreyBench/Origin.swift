import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP/1.1 origin serving the files of some directories from memory, by file name
/// (the query string is ignored, so `?r=1` makes a new URL for the same bytes). It counts image
/// hits; `GET /__hits` returns the count, `GET /__reset` zeroes it.
final class OriginStore: Sendable {
    let files: [String: ByteBuffer]
    let hits = Atomic<Int>(0)

    init(directories: [String]) {
        var files: [String: ByteBuffer] = [:]
        for directory in directories {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                if let data = FileManager.default.contents(atPath: directory + "/" + name) {
                    files[name] = ByteBuffer(bytes: data)
                }
            }
        }
        self.files = files
    }
}

final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let store: OriginStore
    var head: HTTPRequestHead?

    init(store: OriginStore) { self.store = store }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/"
            var status = HTTPResponseStatus.ok
            var contentType = "application/octet-stream"
            let body: ByteBuffer
            if path == "/__hits" {
                body = ByteBuffer(string: "\(store.hits.load(ordering: .relaxed))")
                contentType = "text/plain"
            } else if path == "/__reset" {
                store.hits.store(0, ordering: .relaxed)
                body = ByteBuffer(string: "0")
                contentType = "text/plain"
            } else if let file = store.files[String(path.dropFirst())] {
                store.hits.add(1, ordering: .relaxed)
                body = file
                contentType = Self.contentType(path)
            } else {
                status = .notFound
                body = ByteBuffer()
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "Content-Length", value: "\(body.readableBytes)")
            let keepAlive = head.isKeepAlive
            headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { channel.close(promise: nil) }
            }
        }
    }

    static func contentType(_ path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "avif": "image/avif"
        case "tif", "tiff": "image/tiff"
        default: "application/octet-stream"
        }
    }
}

/// Runs the origin in this process until killed: `OspreyBench origin DIR...`. Prints
/// `listening PORT` once bound (port from $ORIGIN_PORT, default: any free port).
func runOrigin(directories: [String]) async throws -> Never {
    let store = OriginStore(directories: directories)
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel = try await ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 1024)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(OriginHandler(store: store))
            }
        }
        .bind(host: "127.0.0.1", port: envInt("ORIGIN_PORT", 0)).get()
    // Exit with the harness that started this origin.
    let parent = getppid()
    Thread.detachNewThread {
        while getppid() == parent { sleep(1) }
        exit(0)
    }
    print("listening \(channel.localAddress?.port ?? 0) files \(store.files.count)")
    fflush(nil)
    try await channel.closeFuture.get()
    exit(0)
}

/// An origin process started by the harness (the same executable, `origin` mode).
final class OriginProcess {
    let process = Process()
    let port: Int

    init(directories: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.isExecutableFile(atPath: process.executableURL!.path) {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        process.arguments = ["origin"] + directories
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: " ").dropFirst().first, let port = Int(portText) else {
            throw BenchError("origin did not start: \(text)")
        }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
