import Foundation
import Osprey

/// `OspreyBench receive8 BASE COUNT NAME...`: the HTTP receive alone of scenario 8's job: Osprey's
/// `ImageDownloader` (default `DataLoader`) downloads COUNT unique URLs (BASE/NAME?r=..., the names
/// in turn), 4 at a time, and drops the bodies: no decode, no cache. Prints the rate and this
/// process's CPU per URL, the share of the CLI's CPU per image that receiving the bodies costs
/// (`Benchmarks/cli_budget.py` runs it against an nginx origin).
func receive8(_ arguments: [String]) async throws {
    guard arguments.count >= 3, let count = Int(arguments[1]) else {
        throw BenchError("usage: OspreyBench receive8 BASE COUNT NAME...")
    }
    let base = arguments[0]
    let names = Array(arguments.dropFirst(2))
    let tag = UUID().uuidString.prefix(8)
    let urls = (0..<count).map { URL(string: "\(base)/\(names[$0 % names.count])?r=\(tag)-\($0)")! }
    let downloader = ImageDownloader()
    let cpuBefore = processCPU()
    let started = Date()
    var bytes = 0
    try await withThrowingTaskGroup(of: Int.self) { group in
        var next = 0
        func add() {
            let url = urls[next]
            next += 1
            group.addTask { try await downloader.download(url).data.count }
        }
        for _ in 0..<min(4, urls.count) { add() }
        while let received = try await group.next() {
            bytes += received
            if next < urls.count { add() }
        }
    }
    let seconds = Date().timeIntervalSince(started)
    let cpu = processCPU() - cpuBefore
    print(
        String(
            format: "receive8: %d URLs, %.1f MB, %.1f URLs/s, %.3f ms CPU per URL", count, Double(bytes) / 1e6,
            Double(count) / seconds, cpu * 1000 / Double(count)))
}
