import Foundation
import Synchronization

// MARK: - Timing

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

/// Wall time of `body`, in seconds.
func time(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return (clock.now - start).seconds
}

/// CPU seconds this process (every thread) has used so far.
func processCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// A shared counter for work queues.
final class Counter: Sendable {
    let value = Atomic<Int>(0)
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

/// Runs `body` for every index in `0..<count`, `concurrency` at a time: each of `concurrency`
/// tasks takes the next index until none are left.
func forEachIndex(_ count: Int, concurrency: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    let counter = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                while true {
                    let i = counter.next()
                    guard i < count else { return }
                    try await body(i)
                }
            }
        }
        try await group.waitForAll()
    }
}

// MARK: - Figures

/// One measured figure: per-repetition samples of a subject and (optionally) of its baseline,
/// measured interleaved in the same run. Ratios are per repetition (subject_i / baseline_i), so
/// drift of the machine between repetitions cancels.
struct Figure: Codable {
    var scenario: Int
    var name: String
    /// The unit of `median`/`min`/`max`, e.g. "ns/op", "µs/request", "images/s", "MB/s", "s".
    var unit: String
    var median: Double
    var min: Double
    var max: Double
    var samples: [Double]
    var baseline: String?
    var baselineMedian: Double?
    var baselineSamples: [Double]?
    /// median of subject_i / baseline_i (for times lower is better, for rates higher is better).
    var ratio: Double?
    var ratioMin: Double?
    var ratioMax: Double?
    var goal: String?
    var goalMet: Bool?
    var note: String?

    init(
        scenario: Int, name: String, unit: String, samples: [Double], baseline: String? = nil,
        baselineSamples: [Double]? = nil, goal: String? = nil, goalMet: ((Figure) -> Bool)? = nil, note: String? = nil
    ) {
        self.scenario = scenario
        self.name = name
        self.unit = unit
        self.samples = samples
        self.median = Stats.median(samples)
        self.min = samples.min() ?? .nan
        self.max = samples.max() ?? .nan
        self.baseline = baseline
        self.baselineSamples = baselineSamples
        if let baselineSamples, !baselineSamples.isEmpty {
            baselineMedian = Stats.median(baselineSamples)
            let ratios = zip(samples, baselineSamples).map { $0 / $1 }
            ratio = Stats.median(ratios)
            ratioMin = ratios.min()
            ratioMax = ratios.max()
        }
        self.goal = goal
        self.note = note
        if let goalMet { self.goalMet = goalMet(self) }
    }
}

enum Stats {
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

func format(_ value: Double) -> String {
    if value.isNaN { return "-" }
    let magnitude = abs(value)
    if magnitude >= 1000 { return String(format: "%.0f", value) }
    if magnitude >= 100 { return String(format: "%.1f", value) }
    if magnitude >= 10 { return String(format: "%.2f", value) }
    return String(format: "%.3f", value)
}

/// Prints one scenario's figures as a table.
func printTable(title: String, _ figures: [Figure]) {
    print("\n## \(title)")
    let header = ["figure", "median", "spread (min..max)", "unit", "baseline", "baseline median", "ratio [min..max]", "goal", "met"]
    var rows: [[String]] = [header]
    for f in figures {
        rows.append([
            f.name, format(f.median), "\(format(f.min))..\(format(f.max))", f.unit,
            f.baseline ?? "-", f.baselineMedian.map(format) ?? "-",
            f.ratio.map { "\(format($0))× [\(format(f.ratioMin ?? .nan))..\(format(f.ratioMax ?? .nan))]" } ?? "-",
            f.goal ?? "-", f.goalMet.map { $0 ? "yes" : "NO" } ?? "-"
        ])
    }
    var widths = [Int](repeating: 0, count: header.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) } }
    for (index, row) in rows.enumerated() {
        print("| " + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |")
        if index == 0 { print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
    }
    for f in figures where f.note != nil { print("  - \(f.name): \(f.note!)") }
    fflush(nil)
}

// MARK: - Process memory

/// Resets the kernel's peak-RSS mark of this process (Linux: `echo 5 > /proc/self/clear_refs`).
func resetPeakRSS() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// A `VmHWM` / `VmRSS` line of /proc/self/status, in MB.
func procStatusMB(_ field: String) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return .nan }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Double($0) } ?? .nan
        return kb / 1024
    }
    return .nan
}

// MARK: - Temporary directories

func makeTempDir(_ name: String) -> URL {
    let base = URL(fileURLWithPath: ProcessInfo.processInfo.environment["OSPREY_BENCH_TMP"] ?? NSTemporaryDirectory())
        .appendingPathComponent("osprey-bench-\(getpid())", isDirectory: true)
    let dir = base.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

func removeTempRoot() {
    let base = URL(fileURLWithPath: ProcessInfo.processInfo.environment["OSPREY_BENCH_TMP"] ?? NSTemporaryDirectory())
        .appendingPathComponent("osprey-bench-\(getpid())", isDirectory: true)
    try? FileManager.default.removeItem(at: base)
}

func env(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }
func envInt(_ name: String, _ fallback: Int) -> Int { env(name).flatMap(Int.init) ?? fallback }
