import Foundation
import Osprey

/// `OspreyBench [scenario numbers...]` runs the suite (all scenarios by default), prints a table per
/// scenario and writes every figure to $BENCH_JSON (default Benchmarks/.work/bench.json; `run.sh` sets
/// it to Benchmarks/results/YYYY-MM-DD-scenario-N.json).
/// `OspreyBench origin DIR...` is the loopback origin the harness starts for itself (scenarios 5 and 6).
/// Scenarios 8 and 9 run as whole processes under `Benchmarks/ab.py` (`cli`, `server`), which calls
/// `OspreyBench limit8 ...` and `limit9 ...` for their in-process baselines (Limit8.swift, Limit9.swift);
/// every comparison with a peer process (the Python + Pillow script, thumbor, nginx) is there.
/// `placeholders DIR...` times the placeholder hashes (PlaceholderHashes.swift).
/// `OspreyBench progressive [IMAGE]`: progressive previews on a throttled origin (Progressive.swift).
@main
struct OspreyBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "origin" {
            try await runOrigin(directories: Array(arguments.dropFirst()))
        }
        if arguments.first == "limit8" {
            try setVipsConcurrency()
            return try await limit8(Array(arguments.dropFirst()))
        }
        if arguments.first == "limit9" {
            try setVipsConcurrency()
            return try await limit9(Array(arguments.dropFirst()))
        }
        if arguments.first == "placeholders" {
            try setVipsConcurrency()
            return try placeholderHashes(directories: Array(arguments.dropFirst()))
        }
        if arguments.first == "progressive" {
            try setVipsConcurrency()
            return try await progressiveBench(Array(arguments.dropFirst()))
        }
        let selected = Set(arguments.compactMap(Int.init))
        func wants(_ n: Int) -> Bool { selected.isEmpty || selected.contains(n) }
        let reps = envInt("BENCH_REPS", 5)
        let e2eReps = envInt("E2E_REPS", 3)
        try setVipsConcurrency()
        defer { removeTempRoot() }

        let started = Date()
        print(
            "# Osprey benchmarks — \(ISO8601DateFormatter().string(from: started)), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(reps) repetitions (end to end: \(e2eReps))"
        )
        var all: [Figure] = []
        func report(_ title: String, _ figures: [Figure]) {
            printTable(title: title, figures)
            all.append(contentsOf: figures)
        }

        var notes: [String] = []
        if wants(5) || wants(6) {
            let smallDir = env("OSPREY_TESTDATA") ?? "Tests/Fixtures/images"
            let largeDir = env("OSPREY_LARGE_IMAGES")
            var classes: [ImageClass] = []
            if wants(6) {
                let (small, skippedSmall) = try loadClass(name: "small (test images)", directory: smallDir, repeats: envInt("SMALL_REPEATS", 5))
                classes.append(small)
                if !skippedSmall.isEmpty { notes.append("small images left out (cannot be processed by): \(skippedSmall.joined(separator: ", "))") }
                if let largeDir {
                    let (large, skippedLarge) = try loadClass(name: "4000×3000 photos", directory: largeDir, repeats: envInt("LARGE_REPEATS", 2))
                    classes.append(large)
                    if !skippedLarge.isEmpty { notes.append("large images left out: \(skippedLarge.joined(separator: ", "))") }
                } else {
                    notes.append("no large photos: set OSPREY_LARGE_IMAGES (run.sh makes them with vips)")
                }
            }
            let origin = try OriginProcess(directories: [smallDir] + (largeDir.map { [$0] } ?? []))
            defer { origin.stop() }
            if wants(5) { report("5. Coalescing (loopback origin)", try await scenario5(reps: reps, origin: origin)) }
            if wants(6) {
                report(
                    "6. End to end: fetch + thumbnail:256 chain + JPEG q80 + disk store",
                    try await scenario6(reps: e2eReps, classes: classes, origin: origin))
            }
        }
        if wants(1) { report("1. Memory-cache hit through the pipeline (1,000,000 lookups over 100 URLs)", try await scenario1(reps: reps)) }
        if wants(2) { report("2. Miss start (20,000 unique URLs, instant loader, 1×1 PNG)", try await scenario2(reps: reps)) }
        if wants(3) { report("3. Memory storage (100k operations each)", try await scenario3(reps: reps)) }
        if wants(4) { report("4. Disk storage (256 KB entries)", try await scenario4(reps: envInt("S4_REPS", 3))) }

        for note in notes { print("note: \(note)") }

        struct Output: Encodable {
            var date: String
            var cores: Int
            var machine: String
            var repetitions: Int
            var endToEndRepetitions: Int
            var notes: [String]
            var figures: [Figure]
        }
        let machine =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let output = Output(
            date: ISO8601DateFormatter().string(from: started), cores: ProcessInfo.processInfo.activeProcessorCount,
            machine: machine, repetitions: reps, endToEndRepetitions: e2eReps, notes: notes, figures: all)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let path = env("BENCH_JSON") ?? "Benchmarks/.work/bench.json"
        try? FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(output).write(to: URL(fileURLWithPath: path))
        print("\nfigures written to \(path)")
    }
}
