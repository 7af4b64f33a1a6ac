import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Osprey
import Synchronization

/// `OspreyBench progressive [IMAGE]`: progressive previews of a 4000 × 3000 progressive JPEG
/// served from loopback at a throttled rate (issue 42's goals, reported as ratios).
///
/// The JPEG is made here: IMAGE (default `$OSPREY_TESTDATA/hubble_deep_field.jpg`) stretched to
/// 4000 × 3000 and saved at quality 90 with libvips' `interlace` (``ImageEncoder/interlace``).
/// The origin, in this process on its own event loop, sends it in 16 KiB chunks at
/// `PROG_RATE` bytes per second (default: the body in `PROG_SECONDS`, 4 s). Each of `PROG_REPS`
/// rounds (default 5) loads a new URL through `images(for:)` with ``ProgressiveJPEG`` at its
/// defaults (interval 0.5 s) and no processor, so the previews and the final image are
/// 4000 × 3000.
///
/// - **First preview**: the time from the request to the first preview, over the time to the
///   final image (goal ≤ 0.30).
/// - **Preview CPU**: the thread CPU time of every preview decode of a round, added up, over that
///   of the round's final decode (goal ≤ 1.0): a decoder wrapper times each decode on its thread
///   (`CLOCK_THREAD_CPUTIME_ID`); a decode of fewer bytes than the body is a preview's.
func progressiveBench(_ arguments: [String]) async throws {
    let reps = envInt("PROG_REPS", 5)
    let imagePath = arguments.first ?? ((env("OSPREY_TESTDATA") ?? "Tests/Fixtures/images") + "/hubble_deep_field.jpg")
    let source = try Image(contentsOf: URL(fileURLWithPath: imagePath))
    let stretched = try ImageProcessors.Resize(width: 4000, height: 3000, contentMode: .stretch).process(source)
    let body = try ImageEncoder(format: .jpeg, quality: 90, interlace: true).encode(stretched)
    let seconds = Double(envInt("PROG_SECONDS", 4))
    let rate = envInt("PROG_RATE", Int(Double(body.count) / seconds))
    let origin = try await ThrottledOrigin.start(body: body, bytesPerSecond: rate)
    let loader = DataLoader()
    let timings = DecodeTimings()
    print("# progressive previews — \(stretched.width)×\(stretched.height) progressive JPEG, \(body.count) bytes at \(rate) B/s, \(reps) rounds")
    print("round  previews  first preview s  final s  first/final  preview CPU s  final CPU s  CPU ratio")
    var firstRatios: [Double] = []
    var cpuRatios: [Double] = []
    for round in 1...reps {
        timings.reset(bodySize: body.count)
        let cache = benchCache("progressive-\(round)")
        let pipeline = ImagePipeline(
            configuration: .init(
                cache: cache, downloader: ImageDownloader(loader: loader), decoder: TimedDecoder(timings: timings)))
        let clock = ContinuousClock()
        let start = clock.now
        var first: Duration?
        var final: Duration?
        var previews = 0
        let url = URL(string: "http://127.0.0.1:\(origin.port)/progressive.jpg?r=\(round)-\(UUID().uuidString)")!
        for try await result in pipeline.images(for: .url(url), options: [.progressiveJPEG(), .cacheMemoryOnly]) {
            if result.isPreview {
                previews += 1
                if first == nil { first = clock.now - start }
            } else {
                final = clock.now - start
            }
        }
        let (previewCPU, finalCPU) = timings.totals
        let finalSeconds = final.map(seconds(of:)) ?? .nan
        let firstSeconds = first.map(seconds(of:)) ?? .nan
        let firstRatio = firstSeconds / finalSeconds
        let cpuRatio = previewCPU / finalCPU
        if first != nil { firstRatios.append(firstRatio) }
        cpuRatios.append(cpuRatio)
        print(
            String(
                format: "%5d  %8d  %15.3f  %7.3f  %11.3f  %13.3f  %11.3f  %9.3f", round, previews, firstSeconds, finalSeconds, firstRatio,
                previewCPU, finalCPU, cpuRatio))
    }
    try await loader.shutdown()
    await origin.stop()
    let firstMedian = median(firstRatios), cpuMedian = median(cpuRatios)
    print(String(format: "median first preview / final: %.3f (goal <= 0.30) %@", firstMedian, firstMedian <= 0.30 ? "PASS" : "FAIL"))
    print(String(format: "median preview CPU / final decode CPU: %.3f (goal <= 1.0) %@", cpuMedian, cpuMedian <= 1.0 ? "PASS" : "FAIL"))
}

private func seconds(of duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The thread CPU time of the decodes of one round: previews (fewer bytes than the body) and
/// the final decode.
final class DecodeTimings: Sendable {
    private let state = Mutex<(bodySize: Int, previews: Double, final: Double)>((0, 0, 0))

    func reset(bodySize: Int) { state.withLock { $0 = (bodySize, 0, 0) } }

    func record(bytes: Int, cpu: Double) {
        state.withLock { state in
            if bytes < state.bodySize { state.previews += cpu } else { state.final += cpu }
        }
    }

    var totals: (previews: Double, final: Double) { state.withLock { ($0.previews, $0.final) } }
}

/// Osprey's decoder, timed on the decoding thread.
struct TimedDecoder: ImageDecoding {
    let timings: DecodeTimings
    private let decoder = ImageDecoder()

    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        let before = threadCPUSeconds()
        defer { timings.record(bytes: data.count, cpu: threadCPUSeconds() - before) }
        return try decoder.decode(data, options: options)
    }

    private func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// A loopback origin sending one body in 16 KiB chunks at a fixed rate, on its own event loop.
final class ThrottledOrigin: Sendable {
    let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    private init(port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup) {
        self.port = port
        self.channel = channel
        self.group = group
    }

    static func start(body: Data, bytesPerSecond: Int) async throws -> ThrottledOrigin {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(ThrottledHandler(body: body, bytesPerSecond: bytesPerSecond))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ThrottledOrigin(port: channel.localAddress?.port ?? 0, channel: channel, group: group)
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

private final class ThrottledHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let chunk = 16_384
    let body: Data
    let pause: TimeAmount

    init(body: Data, bytesPerSecond: Int) {
        self.body = body
        pause = .nanoseconds(Int64(Double(Self.chunk) / Double(max(1, bytesPerSecond)) * 1e9))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "image/jpeg")
        headers.add(name: "Content-Length", value: "\(body.count)")
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        send(context, from: 0)
    }

    private func send(_ context: ChannelHandlerContext, from offset: Int) {
        guard context.channel.isActive else { return }
        guard offset < body.count else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let end = min(body.count, offset + Self.chunk)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body[offset..<end])))), promise: nil)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: pause) {
            let (handler, context) = bound.value
            handler.send(context, from: end)
        }
    }
}
