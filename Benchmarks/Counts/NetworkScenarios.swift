import AsyncHTTPClient
import Foundation
import NIOCore
import Osprey
import OspreyServer
import OspreyTestSupport
import ServiceLifecycle

/// The paths with a network: misses through ``LoopbackOrigin`` (this process), progressive
/// previews, and `osprey serve`'s hits and misses in process.
let networkScenarios: [Scenario] = [
    // A miss through the downloader: a new URL per step, `thumbnail:256` folded into the decode,
    // the result kept in memory. The small image is `hopper.jpg` (6 kB), the photo 4000 × 3000.
    Scenario(name: "miss-small", iterations: 20) { work in
        try await missScenario(work, name: "miss-small", body: try FixtureImages.data("hopper.jpg"))
    },
    Scenario(name: "miss-photo", iterations: 2, warmUp: 1) { work in
        try await missScenario(work, name: "miss-photo", body: try work.photo())
    },
    // A 1000 × 750 progressive JPEG fed scan by scan (each chunk ends just past the next scan's
    // start, the next chunk waits for the preview): one preview per scan, then the final image.
    Scenario(name: "progressive", iterations: 3, warmUp: 1) { work in
        let jpeg = try work.progressiveJPEG()
        let chunks = scanChunks(jpeg)
        let cache = ImageCache(
            name: "progressive", memoryConfig: MemoryStorage.Config(),
            diskConfig: DiskStorage.Config(name: "progressive", directory: try work.scratch("progressive"), cleansOnOpen: false))
        let settings = ProgressiveJPEG(isEnabled: true, interval: 0, limitsDecodeCost: false)
        return Prepared(step: { index in
            let (previewed, signal) = AsyncStream<Void>.makeStream()
            let pipeline = ImagePipeline(cache: cache, downloader: ImageDownloader(loader: ScanByScanLoader(chunks: chunks, previewed: previewed)))
            let url = URL(string: "https://images.example.com/progressive/\(index).jpg")!
            var previews = 0
            for try await result in pipeline.images(for: .url(url), options: [.progressiveJPEG(settings), .storage(.memory)]) {
                if result.isPreview {
                    previews += 1
                    signal.yield()
                }
            }
            signal.finish()
            guard previews == chunks.count - 1 else { throw CountsError("\(previews) previews for \(chunks.count) chunks") }
        })
    },
    // `osprey serve` (thumbor URLs) on loopback, requested by async-http-client in this process:
    // memory hits of one result, and misses (a new source URL per step, fit-in 256 × 256, JPEG q80).
    Scenario(name: "server-hit", iterations: 100, warmUp: 5) { work in
        try await serverScenario(work, name: "server-hit") { _ in "/m/hit/hopper.jpg" }
    },
    Scenario(name: "server-miss", iterations: 20) { work in
        try await serverScenario(work, name: "server-miss") { index in "/m/\(index)/hopper.jpg" }
    }
]

private func missScenario(_ work: Workspace, name: String, body: Data) async throws -> Prepared {
    let origin = try await LoopbackOrigin.start(bodies: ["image.jpg": body])
    let loader = DataLoader()
    let cache = ImageCache(
        name: name, memoryConfig: MemoryStorage.Config(),
        diskConfig: DiskStorage.Config(name: name, directory: try work.scratch(name), cleansOnOpen: false))
    let pipeline = ImagePipeline(cache: cache, downloader: ImageDownloader(loader: loader))
    let options: [RequestOption] = [.processor(try ProcessingSpec(parsing: "thumbnail:256").processor), .storage(.memory)]
    return Prepared(
        step: { index in
            let result = try await pipeline.image(for: .url(origin.url("/\(index)/image.jpg")), options: options)
            guard result.image.width <= 256 else { throw CountsError("not a thumbnail") }
        },
        finish: {
            try await loader.shutdown()
            await origin.stop()
        })
}

private func serverScenario(_ work: Workspace, name: String, path: @escaping @Sendable (Int) -> String) async throws -> Prepared {
    let origin = try await LoopbackOrigin.start(directories: [FixtureImages.directory])
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.allowUnsafe = true
    configuration.allowLoopbackSources = true
    configuration.cacheDirectory = try work.scratch(name)
    configuration.workers = 2
    let server = OspreyServer(configuration: configuration)
    let (ports, portContinuation) = AsyncStream<Int>.makeStream()
    let group = server.makeServiceGroup(signals: []) { channel in
        portContinuation.yield(channel.localAddress?.port ?? 0)
        portContinuation.finish()
    }
    let task = Task { try await group.run() }
    var port = 0
    for await value in ports { port = value }
    guard port > 0 else { throw CountsError("the server did not start") }
    let base = "http://127.0.0.1:\(port)/unsafe/fit-in/256x256/filters:quality(80):format(jpeg)/http://127.0.0.1:\(origin.port)"
    return Prepared(
        step: { [port] index in
            _ = port
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + path(index)), timeout: .seconds(600))
            let body = try await response.body.collect(upTo: 16 << 20)
            guard response.status == .ok, body.readableBytes > 0 else { throw CountsError("server answered \(response.status)") }
        },
        finish: {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            await origin.stop()
        })
}

/// Cuts a progressive JPEG just past the start of each scan after the first (a scan is complete
/// once the marker after it is in): headers and the first scan, then one scan per chunk.
private func scanChunks(_ jpeg: Data) -> [Data] {
    let bytes = [UInt8](jpeg)
    var starts: [Int] = []
    for index in 0..<(bytes.count - 1) where bytes[index] == 0xFF && bytes[index + 1] == 0xDA { starts.append(index) }
    var cuts = starts.dropFirst().map { $0 + 4 }
    cuts.append(bytes.count)
    var chunks: [Data] = []
    var from = 0
    for cut in cuts {
        chunks.append(Data(bytes[from..<cut]))
        from = cut
    }
    return chunks
}

/// Answers with the chunks of one body, each after the preview of the one before (`previewed`).
private struct ScanByScanLoader: DataLoading {
    let chunks: [Data]
    let previewed: AsyncStream<Void>

    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        let total = chunks.reduce(0) { $0 + $1.count }
        let (body, continuation) = AsyncStream<Data>.makeStream()
        let chunks = chunks
        let previewed = previewed
        Task {
            var waits = previewed.makeAsyncIterator()
            for (index, chunk) in chunks.enumerated() {
                continuation.yield(chunk)
                if index < chunks.count - 1 { _ = await waits.next() }
            }
            continuation.finish()
        }
        return (
            response: DownloadResponse(
                statusCode: 200, headers: ["Content-Type": "image/jpeg", "Content-Length": "\(total)"], url: request.url),
            body: DataChunks(body)
        )
    }
}
