import Foundation
import Osprey
import OspreyTestSupport
import Synchronization

/// The library's paths without a network: memory hits, decode + process, the disk store,
/// placeholder hashes.
let libraryScenarios: [Scenario] = [
    // `cachedImage(for:)` and `image(for:)` over 100 URLs whose images are in the memory cache.
    Scenario(name: "memory-hit-sync", iterations: 5_000, warmUp: 100) { work in
        let (pipeline, sources) = try await memoryHitPipeline(work, "memory-hit-sync")
        return Prepared(step: { index in
            guard pipeline.cachedImage(for: sources[abs(index) % sources.count]) != nil else { throw CountsError("memory miss") }
        })
    },
    Scenario(name: "memory-hit-async", iterations: 3_000, warmUp: 100) { work in
        let (pipeline, sources) = try await memoryHitPipeline(work, "memory-hit-async")
        return Prepared(step: { index in
            _ = try await pipeline.image(for: sources[abs(index) % sources.count])
        })
    },
    // The pipeline's own cost of a miss (scenario 2's shape): a new URL per step, answered in
    // process by a loader with a 1×1 PNG and a decoder that hands back a prebuilt image.
    Scenario(name: "miss-start", iterations: 300, warmUp: 20) { work in
        let image = try Image(rgba: [200, 100, 50, 255], width: 1, height: 1)
        let loader = InstantLoader(data: try image.encoded(as: .png))
        let disk = DiskStorage.Config(name: "miss-start", directory: try work.scratch("miss-start"), cleansOnOpen: false)
        let cache = ImageCache(name: "miss-start", memoryConfig: MemoryStorage.Config(), diskConfig: disk)
        let pipeline = ImagePipeline(
            configuration: .init(cache: cache, downloader: ImageDownloader(loader: loader), decoder: EmptyDecoder(image: image)))
        return Prepared(step: { index in
            let url = URL(string: "https://images.example.com/start/\(index).png")!
            _ = try await pipeline.image(for: .url(url), options: [.storage(.memory)])
        })
    },
    // Every decodable test image: decode folded with `thumbnail:256`, then JPEG q80 (one step: all).
    Scenario(name: "decode-process", iterations: 1, warmUp: 1) { _ in
        let images = try FixtureImages.allNames.map { try FixtureImages.data($0) }
        let chain = try ProcessingSpec(parsing: "thumbnail:256").processor
        return Prepared(step: { _ in
            var encoded = 0
            for data in images {
                guard let image = try? ImageDecoder().decode(data, processedBy: chain) else { continue }
                encoded += try image.encoded(as: .jpeg, quality: 80).count
            }
            guard encoded > 0 else { throw CountsError("nothing decoded") }
        })
    },
    // `DiskStorage.Backend`: writes of 16 KB, reads of them, then a trim of 3,000 entries of 4 KB.
    Scenario(name: "disk-write", iterations: 200) { work in
        let disk = try diskBackend(work, "disk-write")
        let payload = pattern(16 * 1024)
        return Prepared(
            step: { index in try await disk.store(payload, forKey: "https://images.example.com/w/\(index).jpg") },
            settle: { await disk.waitForPendingWork() })
    },
    Scenario(name: "disk-read", iterations: 400) { work in
        let disk = try diskBackend(work, "disk-read")
        let payload = pattern(16 * 1024)
        let keys = (0..<100).map { "https://images.example.com/r/\($0).jpg" }
        for key in keys { try await disk.store(payload, forKey: key) }
        await disk.waitForPendingWork()
        return Prepared(step: { index in
            guard await disk.value(forKey: keys[abs(index) % keys.count]) != nil else { throw CountsError("disk miss") }
        })
    },
    Scenario(name: "disk-trim", iterations: 1, warmUp: 0) { work in
        let directory = try work.scratch("disk-trim")
        // A clock that ticks one second per reading: the entries' times, and so the trim's order
        // and work, do not depend on how fast the machine writes them.
        let ticks = Mutex(1_800_000_000.0)
        let clock: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: ticks.withLock {
                    $0 += 1
                    return $0
                })
        }
        let filler = DiskStorage.Backend(
            config: DiskStorage.Config(name: "trim", directory: directory, cleansOnOpen: false, now: clock))
        let payload = pattern(4 * 1024)
        for index in 0..<3_000 { try await filler.store(payload, forKey: "https://images.example.com/t/\(index).jpg") }
        await filler.waitForPendingWork()
        // The same directory opened with room for a tenth of it: the trim removes the oldest 90%
        // and more (down to the trim ratio).
        let disk = DiskStorage.Backend(
            config: DiskStorage.Config(name: "trim", directory: directory, sizeLimit: 300 * 4 * 1024, cleansOnOpen: false, now: clock))
        _ = await disk.totalSize()
        await disk.waitForPendingWork()
        return Prepared(
            step: { _ in
                let report = await disk.removeSizeExceeded()
                guard report.removed.count > 2_700 else { throw CountsError("trim removed \(report.removed.count)") }
            },
            settle: { await disk.waitForPendingWork() })
    },
    // ThumbHash and BlurHash (4×3) from the bytes of every decodable test image (one step: all).
    Scenario(name: "placeholders", iterations: 1, warmUp: 1) { _ in
        let images = try FixtureImages.allNames.map { try FixtureImages.data($0) }.filter { (try? Image(data: $0)) != nil }
        return Prepared(step: { _ in
            for data in images {
                _ = try ThumbHash(imageData: data)
                _ = try BlurHash(imageData: data)
            }
        })
    }
]

/// A pipeline whose memory cache holds a 1×1 image for each of 100 URLs.
private func memoryHitPipeline(_ work: Workspace, _ name: String) async throws -> (ImagePipeline, [ImageSource]) {
    let cache = ImageCache(
        name: name, memoryConfig: MemoryStorage.Config(),
        diskConfig: DiskStorage.Config(name: name, directory: try work.scratch(name), cleansOnOpen: false))
    let image = try Image(rgba: [200, 100, 50, 255], width: 1, height: 1)
    let urls = (0..<100).map { URL(string: "https://images.example.com/photos/\($0).jpg")! }
    for url in urls { await cache.store(image, forKey: url.absoluteString, toDisk: false) }
    return (ImagePipeline(cache: cache), urls.map { ImageSource.url($0) })
}

private func diskBackend(_ work: Workspace, _ name: String) throws -> DiskStorage.Backend {
    DiskStorage.Backend(
        config: DiskStorage.Config(name: name, directory: try work.scratch(name), sizeLimit: Int.max / 4, cleansOnOpen: false))
}

/// `count` bytes of a fixed pattern.
func pattern(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
}

/// A loader that answers every request in process with the same bytes, through the public
/// ``DataLoading`` protocol alone.
private struct InstantLoader: DataLoading {
    let data: Data
    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        (
            response: DownloadResponse(statusCode: 200, headers: ["Content-Type": "image/png", "Content-Length": "\(data.count)"], url: request.url),
            body: DataChunks(data: data)
        )
    }
}

/// Nuke's "empty decoder": hands back one prebuilt image without looking at the bytes.
private struct EmptyDecoder: ImageDecoding {
    let image: Image
    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image { image }
}
