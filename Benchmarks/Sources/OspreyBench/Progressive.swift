import Foundation
import Osprey
import OspreyTestSupport

/// `OspreyBench progressive [IMAGE]`: progressive previews of a 4000 × 3000 progressive JPEG
/// served from loopback at a throttled rate (issue 42's goals, reported as ratios).
///
/// The JPEG is made here: IMAGE (default `$OSPREY_TESTDATA/hubble_deep_field.jpg`) stretched to
/// 4000 × 3000 and saved at quality 90 with libvips' `interlace` (``ImageEncoder/interlace``).
/// The origin, in this process on its own event loop, sends it in 16 KiB chunks at
/// `PROG_RATE` bytes per second (default: the body in `PROG_SECONDS`, 4 s). Each of `PROG_REPS`
/// rounds (default 5) loads a new URL through `images(for:)` three times, interleaved (the
/// order turns by round), with no processor, so the previews and the final image are
/// 4000 × 3000: with ``ProgressiveJPEG`` at its defaults (interval 0.5 s) and Osprey's decoder
/// (each scan decoded once); with the same previews through a decoder of the user's own that
/// wraps ``ImageDecoder`` (each preview's prefix decoded whole, the way open-source pipelines
/// make previews); and without previews.
///
/// - **First preview**: the time from the request to the first preview, over the time to the
///   final image (goal ≤ 0.30).
/// - **Preview CPU**: the process CPU time (`getrusage`) of the load with previews minus that of
///   the load without, over the CPU time of decoding the whole body once with ``ImageDecoder``
///   (goal ≤ 1.0): everything the previews cost the process (scanning, copying, decoding,
///   converting), against the final decode. The same for the wrapped decoder: the comparison.
func progressiveBench(_ arguments: [String]) async throws {
    let reps = envInt("PROG_REPS", 5)
    let imagePath = arguments.first ?? ((env("OSPREY_TESTDATA") ?? "Tests/Fixtures/images") + "/hubble_deep_field.jpg")
    let source = try Image(contentsOf: URL(fileURLWithPath: imagePath))
    let stretched = try ImageProcessors.Composition.resize(width: 4000, height: 3000, contentMode: .stretch).process(source)
    let body = try ImageEncoder(format: .jpeg, quality: 90, interlace: true).encode(stretched)
    let seconds = Double(envInt("PROG_SECONDS", 4))
    let rate = envInt("PROG_RATE", Int(Double(body.count) / seconds))
    let origin = try await LoopbackOrigin.start(bodies: ["progressive.jpg": body], bytesPerSecond: rate)
    let loader = DataLoader()
    print("# progressive previews — \(stretched.width)×\(stretched.height) progressive JPEG, \(body.count) bytes at \(rate) B/s, \(reps) rounds")
    print(
        "round  previews  first preview s  final s  first/final  CPU with s  CPU without s  preview CPU s  final decode CPU s  CPU ratio"
            + "  wrapped: previews  preview CPU s  CPU ratio")
    var firstRatios: [Double] = []
    var cpuRatios: [Double] = []
    var wrappedRatios: [Double] = []
    let modes = PreviewMode.allCases
    for round in 1...reps {
        var loads: [PreviewMode: ProgressiveLoad] = [:]
        for index in modes.indices {
            let mode = modes[(index + round) % modes.count]
            loads[mode] = try await progressiveLoad(port: origin.port, loader: loader, mode: mode, round: round)
        }
        let before = processCPUSeconds()
        _ = try ImageDecoder().decode(body)
        let finalCPU = processCPUSeconds() - before
        guard let with = loads[.incremental], let wrapped = loads[.wrapped], let without = loads[.none] else { continue }
        let previewCPU = with.cpu - without.cpu
        let wrappedCPU = wrapped.cpu - without.cpu
        let firstRatio = with.first / with.final
        let cpuRatio = previewCPU / finalCPU
        if with.previews > 0 { firstRatios.append(firstRatio) }
        cpuRatios.append(cpuRatio)
        wrappedRatios.append(wrappedCPU / finalCPU)
        print(
            String(
                format: "%5d  %8d  %15.3f  %7.3f  %11.3f  %10.3f  %13.3f  %13.3f  %18.3f  %9.3f  %17d  %13.3f  %9.3f", round, with.previews,
                with.first, with.final, firstRatio, with.cpu, without.cpu, previewCPU, finalCPU, cpuRatio, wrapped.previews, wrappedCPU,
                wrappedCPU / finalCPU))
    }
    try await loader.shutdown()
    await origin.stop()
    let firstMedian = median(firstRatios), cpuMedian = median(cpuRatios)
    print(String(format: "median first preview / final: %.3f (goal <= 0.30) %@", firstMedian, firstMedian <= 0.30 ? "PASS" : "FAIL"))
    print(String(format: "median preview CPU / final decode CPU: %.3f (goal <= 1.0) %@", cpuMedian, cpuMedian <= 1.0 ? "PASS" : "FAIL"))
    print(String(format: "median preview CPU / final decode CPU, each prefix decoded whole (wrapped decoder): %.3f", median(wrappedRatios)))
}

/// How a load makes previews.
private enum PreviewMode: CaseIterable {
    /// Osprey's decoder: each scan decoded once.
    case incremental
    /// A decoder of the user's own around ``ImageDecoder``: each preview decodes its prefix whole.
    case wrapped
    /// No previews.
    case none
}

/// ``ImageDecoder`` behind a type of the user's own.
private struct WrappedDecoder: ImageDecoding {
    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }
}

/// One load of the throttled JPEG: previews delivered, seconds to the first one and to the final
/// image, and the process CPU seconds the load took.
private struct ProgressiveLoad {
    var previews = 0
    var first = Double.nan
    var final = Double.nan
    var cpu = 0.0
}

private func progressiveLoad(port: Int, loader: DataLoader, mode: PreviewMode, round: Int) async throws -> ProgressiveLoad {
    let decoder: any ImageDecoding = mode == .wrapped ? WrappedDecoder() : ImageDecoder()
    let pipeline = ImagePipeline(
        configuration: .init(
            cache: benchCache("progressive-\(round)-\(mode)"), downloader: ImageDownloader(loader: loader), decoder: decoder))
    let url = URL(string: "http://127.0.0.1:\(port)/progressive.jpg?r=\(round)-\(UUID().uuidString)")!
    let options: [RequestOption] = mode == .none ? [.storage(.memory)] : [.progressiveJPEG(), .storage(.memory)]
    var load = ProgressiveLoad()
    let clock = ContinuousClock()
    let cpuBefore = processCPUSeconds()
    let start = clock.now
    for try await result in pipeline.images(for: .url(url), options: options) {
        if result.isPreview {
            load.previews += 1
            if load.first.isNaN { load.first = seconds(of: clock.now - start) }
        } else {
            load.final = seconds(of: clock.now - start)
        }
    }
    load.cpu = processCPUSeconds() - cpuBefore
    return load
}

/// User and system CPU time of the whole process, in seconds.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

private func seconds(of duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
