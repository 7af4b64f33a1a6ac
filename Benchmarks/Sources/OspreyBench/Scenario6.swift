import AsyncHTTPClient
import CVipsBench
import Foundation
import NIOCore
import Osprey

/// One class of images for the end-to-end job: the files, each served by the origin by name.
struct ImageClass {
    var name: String
    var directory: String
    var files: [String]
    /// How many times the list is fetched per run (each time under new URLs, so every request misses).
    var repeats: Int
    /// The bytes of every file, for the in-process limit.
    var bytes: [String: Data]
}

/// The end-to-end job's processing, as a user gives it: `thumbnail:256` (a downsample into a
/// 256×256 box), which the decode folds into libvips shrink-on-load.
let thumbnailChain: ImageProcessors.Composition = try! ProcessingSpec(parsing: "thumbnail:256").processor
/// First frame only: subject and limit decode the same pixels (as scenario 8's Pillow peer does).
let e2eDecoding = DecodingOptions(firstFrameOnly: true)

/// The files of `directory` that Osprey can turn into a thumbnail, and the names of those it cannot.
func loadClass(name: String, directory: String, repeats: Int) throws -> (ImageClass, [String]) {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }.sorted()
    var bytes: [String: Data] = [:]
    var skipped: [String] = []
    let decoder = ImageDecoder(options: e2eDecoding)
    for name in names {
        guard let data = FileManager.default.contents(atPath: directory + "/" + name),
            (try? decoder.decode(data, processedBy: thumbnailChain).encoded(as: .jpeg, quality: 80)) != nil
        else {
            skipped.append("\(name) (Osprey)")
            continue
        }
        bytes[name] = data
    }
    return (ImageClass(name: name, directory: directory, files: bytes.keys.sorted(), repeats: repeats, bytes: bytes), skipped)
}

/// The URLs of one run: every file `repeats` times, each under a URL never used before.
func runURLs(_ imageClass: ImageClass, port: Int, tag: String) -> [String] {
    var urls: [String] = []
    for r in 0..<imageClass.repeats {
        for name in imageClass.files { urls.append("http://127.0.0.1:\(port)/\(name)?run=\(tag)&r=\(r)") }
    }
    return urls
}

struct RunResult {
    var seconds: Double
    var peakMB: Double
    /// CPU seconds of this whole process during the run (nil where not measured).
    var cpuSeconds: Double? = nil
}

/// Osprey: fetch + decode with the `thumbnail:256` chain + encode JPEG q80 + disk store, 4 concurrent.
func ospreyRun(urls: [String], concurrency: Int) async throws -> RunResult {
    let loader = DataLoader()
    let cache = benchCache("e2e", serializer: ThumbnailJPEGSerializer())
    let pipeline = ImagePipeline(cache: cache, downloader: ImageDownloader(loader: loader))
    let options: [RequestOption] = [.processor(thumbnailChain), .decodingOptions(e2eDecoding), .cacheWrites(.beforeDelivery)]
    let sources = urls.map { ImageSource.url(URL(string: $0)!) }
    resetPeakRSS()
    let seconds = try await time {
        try await forEachIndex(sources.count, concurrency: concurrency) { i in
            let result = try await pipeline.image(for: sources[i], options: options)
            precondition(max(result.image.width, result.image.height) <= 256)
        }
    }
    let peak = procStatusMB("VmHWM")
    try await loader.shutdown()
    let files = (try? FileManager.default.contentsOfDirectory(atPath: cache.diskStorage.directoryURL.path).filter { !$0.hasPrefix(".") }.count) ?? 0
    precondition(files == urls.count, "expected \(urls.count) files on disk, found \(files)")
    // The directory stays until the process ends (removeTempRoot): deleting it here made ext4
    // skip the just-freed inodes when the next repetition created its files (`recently_deleted`
    // in the kernel profile), so every repetition wrote slower than the one before.
    return RunResult(seconds: seconds, peakMB: peak)
}

/// The libvips in-process limit: the same decode with the chain + encode on the same bytes held in
/// memory, `threads` threads (`ImageDecoder.decode(_:processedBy:)`, which plans the decode as the
/// pipeline does).
func limitRun(_ datas: [Data], threads: Int) async -> RunResult {
    let decoder = ImageDecoder(options: e2eDecoding)
    return await threadsRun(datas, threads: threads) { data in
        let image = try! decoder.decode(data, processedBy: thumbnailChain)
        blackHole(try! image.encoded(as: .jpeg, quality: 80))
    }
}

/// Runs `work` over every element of `datas` on `threads` plain threads (not the Swift
/// concurrency pool), each taking the next element until none are left.
func threadsRun(_ datas: [Data], threads: Int, _ work: @escaping @Sendable (Data) -> Void) async -> RunResult {
    resetPeakRSS()
    let cpuBefore = processCPU()
    let seconds = await time {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                let counter = Counter()
                DispatchQueue.concurrentPerform(iterations: threads) { _ in
                    while true {
                        let i = counter.next()
                        guard i < datas.count else { return }
                        work(datas[i])
                    }
                }
                continuation.resume()
            }
        }
    }
    return RunResult(seconds: seconds, peakMB: procStatusMB("VmHWM"), cpuSeconds: processCPU() - cpuBefore)
}

/// Raw HTTP fetch of the same URLs with the same client (async-http-client), `concurrency` at once.
func rawFetchRun(urls: [String], concurrency: Int) async throws -> RunResult {
    let loader = DataLoader()
    resetPeakRSS()
    let seconds = try await time {
        try await forEachIndex(urls.count, concurrency: concurrency) { i in
            blackHole(try await rawFetch(urls[i], client: loader.client))
        }
    }
    let peak = procStatusMB("VmHWM")
    try await loader.shutdown()
    return RunResult(seconds: seconds, peakMB: peak)
}

/// The whole body of `url`, fetched with `client` and nothing else (the raw-fetch baselines).
func rawFetch(_ url: String, client: HTTPClient) async throws -> ByteBuffer {
    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
    return try await response.body.collect(upTo: 1 << 30)
}

/// Scenario 6: the pipeline end to end (fetch + `thumbnail:256` + JPEG q80 + disk store) against
/// the libvips in-process limit and a raw fetch, interleaved per repetition. The comparison with
/// the Python + Pillow peer is scenario 8 (`Benchmarks/ab.py cli`), as whole processes.
func scenario6(reps: Int, classes: [ImageClass], origin: OriginProcess) async throws -> [Figure] {
    let concurrency = envInt("E2E_CONCURRENCY", 4)
    let threads = envInt("LIMIT_THREADS", ProcessInfo.processInfo.activeProcessorCount)
    var figures: [Figure] = []
    for imageClass in classes {
        var osprey: [Double] = [], limit: [Double] = [], raw: [Double] = []
        var ospreyMB: [Double] = [], limitMB: [Double] = []
        let datas = (0..<imageClass.repeats).flatMap { _ in imageClass.files.map { imageClass.bytes[$0]! } }
        // a warm-up run of each, not counted
        _ = try await ospreyRun(urls: runURLs(imageClass, port: origin.port, tag: "warm"), concurrency: concurrency)
        _ = await limitRun(datas, threads: threads)
        for rep in 0..<reps {
            let count = Double(datas.count)
            let l = await limitRun(datas, threads: threads)
            limit.append(count / l.seconds)
            limitMB.append(l.peakMB)
            let f = try await rawFetchRun(urls: runURLs(imageClass, port: origin.port, tag: "raw\(rep)"), concurrency: concurrency)
            raw.append(count / f.seconds)
            let o = try await ospreyRun(urls: runURLs(imageClass, port: origin.port, tag: "osprey\(rep)"), concurrency: concurrency)
            osprey.append(count / o.seconds)
            ospreyMB.append(o.peakMB)
        }
        let label = "\(imageClass.name): \(imageClass.files.count) files × \(imageClass.repeats)"
        figures.append(
            Figure(
                scenario: 6, name: "\(label), Osprey pipeline, \(concurrency) concurrent", unit: "images/s", samples: osprey,
                baseline: "libvips in-process limit (\(threads) threads, vips concurrency 1)", baselineSamples: limit,
                goal: "≥ 0.85× limit", goalMet: { $0.ratio! >= 0.85 }))
        figures.append(
            Figure(
                scenario: 6, name: "\(label), Osprey pipeline vs raw fetch", unit: "images/s", samples: osprey,
                baseline: "raw HTTP fetch, same client, \(concurrency) concurrent", baselineSamples: raw))
        figures.append(
            Figure(
                scenario: 6, name: "\(label), Osprey peak RSS (whole harness process)", unit: "MB", samples: ospreyMB,
                baseline: "libvips limit, peak RSS of the same process", baselineSamples: limitMB,
                note: "VmHWM during the run (peak mark reset through /proc/self/clear_refs before it); includes what the harness process already held"
            ))
    }
    return figures
}

/// Sets libvips' own thread pool to one thread (after Osprey has initialised libvips).
func setVipsConcurrency() throws {
    _ = try ImageDecoder().decode(try tinyPNG())
    // Osprey loads libvips' heif module when an AVIF first needs it; the stock-libvips baselines
    // call libvips directly, so it is loaded here, as stock libvips' own init would have.
    _ = ImageFormat.avif.canEncode
    vips_concurrency_set(Int32(envInt("VIPS_CONCURRENCY", 1)))
}
