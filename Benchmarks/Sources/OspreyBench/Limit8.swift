import CVipsBench
import Foundation
import Osprey

// Scenario 8's in-process baselines: what the CLI's image work costs on bytes already in memory.
// `Benchmarks/ab.py cli --limits OspreyBench` runs them interleaved with the whole `osprey prefetch`
// processes and the Python peer.

/// The spec the CLI gets in scenario 8, and the same chain and output for the in-process baselines.
let cliSpec = "thumbnail:256,format:jpeg:80"

/// Stock libvips on `data`: `vips_thumbnail_buffer` into 256×256 + `vips_jpegsave_buffer` Q 80.
/// The JPEG's size, or nil when libvips failed.
func stockThumbnailJPEG(_ data: Data) -> Int? {
    data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
        var thumbnail: UnsafeMutablePointer<VipsImage>?
        guard osprey_bench_thumbnail_buffer(bytes.baseAddress, bytes.count, &thumbnail, 256, 256) == 0, let thumbnail else { return nil }
        defer { osprey_bench_unref(thumbnail) }
        var out: UnsafeMutableRawPointer?
        var length = 0
        guard osprey_bench_jpegsave_buffer(thumbnail, &out, &length, 80) == 0 else { return nil }
        osprey_bench_free(out)
        return length
    }
}

/// The in-process limit of the CLI's image work: Osprey's decoder with the CLI's decoding options
/// (first frame only when the spec's format cannot animate, as the CLI decodes) and chain (the
/// spec's steps, then, as the CLI's `format:` step does, alpha flattened onto white for JPEG),
/// then the CLI's cache serializer (JPEG q80).
func cliLimitRun(_ datas: [Data], threads: Int) async -> RunResult {
    let spec = try! ProcessingSpec(parsing: cliSpec)
    let serializer = DefaultCacheSerializer(quality: spec.quality ?? 80, preferredFormat: spec.format)
    let decoder = ImageDecoder(options: DecodingOptions(firstFrameOnly: spec.format.map { !$0.supportsAnimation } ?? false))
    let flattens = spec.format.map { !$0.holdsAlpha } ?? false
    return await threadsRun(datas, threads: threads) { data in
        var image = try! decoder.decode(data, processedBy: spec.processor)
        if flattens && image.hasAlpha { image = try! ImageProcessors.Composition.pad().process(image) }
        blackHole(try! serializer.data(with: image, original: data, processorIdentifier: spec.processor.identifier))
    }
}

/// `OspreyBench limit8 cli|stock THREADS COPIES FILE...`: one run of the CLI's image work
/// (``cliLimitRun(_:threads:)``) or of stock libvips (``stockThumbnailJPEG(_:)``) over COPIES copies of
/// the FILEs' bytes, already in memory, on THREADS plain threads (VIPS_CONCURRENCY 1 each). Prints
/// one JSON line: images, seconds, images_per_s, cpu_ms per image, and the files stock libvips
/// cannot thumbnail (left out of both, so that every participant does the same files).
func limit8(_ arguments: [String]) async throws {
    guard arguments.count >= 4, ["cli", "stock"].contains(arguments[0]), let threads = Int(arguments[1]), let copies = Int(arguments[2]) else {
        throw BenchError("usage: OspreyBench limit8 cli|stock THREADS COPIES FILE...")
    }
    var failed: [String] = []
    var datas: [Data] = []
    for file in arguments.dropFirst(3) {
        guard let data = FileManager.default.contents(atPath: file) else { throw BenchError("cannot read \(file)") }
        if stockThumbnailJPEG(data) == nil { failed.append(file) } else { datas.append(data) }
    }
    let all = (0..<max(1, copies)).flatMap { _ in datas }
    let run =
        arguments[0] == "cli"
        ? await cliLimitRun(all, threads: threads)
        : await threadsRun(all, threads: threads) { data in precondition(stockThumbnailJPEG(data) != nil) }
    struct Output: Encodable {
        var images: Int
        var seconds: Double
        var images_per_s: Double
        var cpu_ms: Double
        var failed: [String]
    }
    let n = Double(all.count)
    let output = Output(
        images: all.count, seconds: run.seconds, images_per_s: n / run.seconds, cpu_ms: (run.cpuSeconds ?? .nan) * 1000 / n, failed: failed)
    print(String(decoding: try JSONEncoder().encode(output), as: UTF8.self))
}
