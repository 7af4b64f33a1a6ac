import Foundation
import Osprey

/// `OspreyBench probe2 [pipeline|group|downloader|setup] [requests] [rounds]`: scenario 2's completion-handler
/// shape alone, in a loop, printing µs per request for each round. For profiling (`perf record`)
/// the miss path without the rest of the scenario around it.
func probe2(_ arguments: [String]) async throws {
    let part = arguments.first ?? "pipeline"
    let n = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
    let png = try tinyPNG()
    let image = try tinyImage()
    let options: [RequestOption] = [.storage(.memory), .cachePolicy(.memoryOrLoad), .callbackQueue(.immediate)]
    var immediate = DownloadOptions()
    immediate.callbackQueue = .immediate
    for round in 0..<rounds {
        let urls = (0..<n).map { URL(string: "https://images.example.com/p\(round)/\($0).png")! }
        let seconds: Double
        if part == "setup" {
            // The probe's own per-request setup (URLs, sources, pipeline), to subtract from counts.
            let sources = urls.map { ImageSource.url($0) }
            let pipeline = ImagePipeline(
                configuration: .init(
                    cache: benchCache("probe"), downloader: ImageDownloader(loader: InstantLoader(data: png)),
                    decoder: EmptyDecoder(image: image)))
            blackHole((sources, pipeline))
            seconds = 0
        } else if part == "group" {
            // Scenario 2's task-group shape: a Swift task per request, awaiting image(for:).
            let sources = urls.map { ImageSource.url($0) }
            let pipeline = ImagePipeline(
                configuration: .init(
                    cache: benchCache("probe"), downloader: ImageDownloader(loader: InstantLoader(data: png)),
                    decoder: EmptyDecoder(image: image)))
            let memoryOnly: [RequestOption] = [.storage(.memory), .cachePolicy(.memoryOrLoad)]
            seconds = try await time {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for source in sources { group.addTask { blackHole(try await pipeline.image(for: source, options: memoryOnly)) } }
                    try await group.waitForAll()
                }
            }
        } else if part == "downloader" {
            let downloader = ImageDownloader(loader: InstantLoader(data: png))
            seconds = await time {
                await startAll(urls) { url, completed in
                    downloader.download(url, options: immediate) { result in
                        precondition((try? result.get()) != nil, "every download must succeed")
                        completed()
                    }
                }
            }
        } else {
            let sources = urls.map { ImageSource.url($0) }
            let pipeline = ImagePipeline(
                configuration: .init(
                    cache: benchCache("probe"), downloader: ImageDownloader(loader: InstantLoader(data: png)),
                    decoder: EmptyDecoder(image: image)))
            seconds = await time {
                await startAll(sources) { source, completed in
                    pipeline.loadImage(with: source, options: options) { result in
                        precondition((try? result.get()) != nil, "every request must load")
                        completed()
                    }
                }
            }
        }
        print(String(format: "%@ round %d: %.2f µs/request", part, round, seconds / Double(n) * 1e6))
    }
}
