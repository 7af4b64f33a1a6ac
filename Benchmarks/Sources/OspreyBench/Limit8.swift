import Foundation

// Scenario 8's in-process baselines run alone, outside the scenario: the command to compare them
// with each other or to put one under `perf record`.

/// `OspreyBench limit8 DIR [threads] [rounds] [cli]`: scenario 8's in-process baselines alone,
/// interleaved round by round on the files of DIR (each 8 times): the CLI's image work (the CLI's
/// decoding options and serializer), scenario 6's (first frame, plain JPEG encode) and stock
/// libvips. Images/s. With `cli`, only the first (to profile the limit alone).
func limit8(_ arguments: [String]) async throws {
    guard let directory = arguments.first else { throw BenchError("usage: OspreyBench limit8 DIR [threads] [rounds] [cli]") }
    let threads = arguments.count > 1 ? Int(arguments[1]) ?? 2 : 2
    let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
    let cliOnly = arguments.count > 3 && arguments[3] == "cli"
    let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }.sorted()
    let usable = files.compactMap { FileManager.default.contents(atPath: directory + "/" + $0) }.filter { stockThumbnailJPEG($0) != nil }
    let datas = (0..<8).flatMap { _ in usable }
    let columns = cliOnly ? "" : " | scenario 6's work (first frame + encode) | stock libvips"
    print(
        "round | CLI's work (CLI's decoding options + serializer)\(columns)   [images/s (CPU ms per image), \(threads) threads, \(datas.count) images]"
    )
    func cell(_ run: RunResult, _ n: Double) -> String {
        String(format: "%.1f (%.2f)", n / run.seconds, (run.cpuSeconds ?? .nan) * 1000 / n)
    }
    for round in 0..<rounds {
        let n = Double(datas.count)
        let cliWork = await cliLimitRun(datas, threads: threads)
        if cliOnly {
            print("\(round) | \(cell(cliWork, n))")
            continue
        }
        let s6Work = await limitRun(datas, threads: threads)
        let stock = await stockRun(datas, threads: threads)
        print("\(round) | \(cell(cliWork, n)) | \(cell(s6Work, n)) | \(cell(stock, n))")
    }
}
