import CVipsBench
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Scenario 9's in-process libvips limit (the server benchmark lives in Benchmarks/server/): what
// the server's image work costs when nothing else runs, measured as imgproxy runs libvips.

/// Stock libvips on `data`: `vips_thumbnail_buffer` into a `box`×`box` box, never enlarging
/// (thumbor's `fit-in`), then `vips_jpegsave_buffer` or `vips_webpsave_buffer` at `quality`.
/// The encoded size, or nil when libvips failed.
func stockFitIn(_ data: Data, box: Int, webp: Bool, quality: Int) -> Int? {
    data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
        var thumbnail: UnsafeMutablePointer<VipsImage>?
        guard osprey_bench_thumbnail_buffer_down(bytes.baseAddress, bytes.count, &thumbnail, Int32(box), Int32(box)) == 0,
            let thumbnail
        else { return nil }
        defer { osprey_bench_unref(thumbnail) }
        var out: UnsafeMutableRawPointer?
        var length = 0
        let failed =
            webp
            ? osprey_bench_webpsave_buffer(thumbnail, &out, &length, Int32(quality))
            : osprey_bench_jpegsave_buffer(thumbnail, &out, &length, Int32(quality))
        guard failed == 0 else { return nil }
        osprey_bench_free(out)
        return length
    }
}

/// `OspreyBench limit9 jpeg|webp THREADS COPIES FILE...`: stock libvips (``stockFitIn(_:box:webp:quality:)``,
/// 512 box, quality 80) over COPIES copies of the FILEs' bytes, already in memory, on THREADS plain
/// threads (VIPS_CONCURRENCY 1 each). Prints one JSON line: images, seconds, images_per_s, and the
/// files libvips could not process (a failed file counts as not done).
func limit9(_ arguments: [String]) async throws {
    guard arguments.count >= 4, ["jpeg", "webp"].contains(arguments[0]), let threads = Int(arguments[1]), let copies = Int(arguments[2]) else {
        throw BenchError("usage: OspreyBench limit9 jpeg|webp THREADS COPIES FILE...")
    }
    let webp = arguments[0] == "webp"
    let files = Array(arguments.dropFirst(3))
    var failed: [String] = []
    var datas: [Data] = []
    for file in files {
        guard let data = FileManager.default.contents(atPath: file) else { throw BenchError("cannot read \(file)") }
        if stockFitIn(data, box: 512, webp: webp, quality: 80) == nil { failed.append(file) } else { datas.append(data) }
    }
    let all = (0..<max(1, copies)).flatMap { _ in datas }
    let run = await threadsRun(all, threads: threads) { data in
        precondition(stockFitIn(data, box: 512, webp: webp, quality: 80) != nil)
    }
    struct Output: Encodable {
        var images: Int
        var seconds: Double
        var images_per_s: Double
        var failed: [String]
    }
    let output = Output(images: all.count, seconds: run.seconds, images_per_s: Double(all.count) / run.seconds, failed: failed)
    print(String(decoding: try JSONEncoder().encode(output), as: UTF8.self))
}
