import Foundation
import Osprey
import OspreyTestSupport

/// `OspreyCounts`: each scenario of the counted benchmarks (instructions and allocations under
/// valgrind's callgrind, `scripts/bench-check.sh`), run through Osprey's public API alone.
///
/// `OspreyCounts NAME [ITERATIONS]` prepares scenario NAME (uncounted), runs its warm-up steps,
/// then calls ``countedRegionBegins(_:)``, runs ITERATIONS steps (default: the scenario's), waits
/// for their work to settle and calls ``countedRegionEnds(_:)``. Under
/// `valgrind --tool=callgrind --zero-before='*countedRegionBegins*' --dump-before='*countedRegionEnds*'`
/// the dump holds exactly the steps' cost, over every thread. Natively it prints the steps'
/// wall time. `OspreyCounts list` prints every scenario with its iterations; `OspreyCounts
/// prepare` makes the generated inputs in `$COUNTS_WORK` (default `.build/counts`) natively, so
/// that no valgrind run spends minutes making them.
@main
struct OspreyCounts {
    /// A synchronous main that waits for the work: valgrind 3.19 dies in the signal handling of the
    /// async main's `dispatch_main` (its main thread parked in `rt_sigsuspend`).
    static func main() {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                try await run()
            } catch {
                FileHandle.standardError.write(Data("OspreyCounts: \(error)\n".utf8))
                exit(1)
            }
            done.signal()
        }
        done.wait()
    }

    static func run() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let work = Workspace(root: URL(fileURLWithPath: ProcessInfo.processInfo.environment["COUNTS_WORK"] ?? ".build/counts"))
        switch arguments.first {
        case nil, "list":
            for scenario in allScenarios { print("\(scenario.name) \(scenario.iterations)") }
        case "prepare":
            _ = try work.photo()
            _ = try work.progressiveJPEG()
        case let name?:
            guard let scenario = allScenarios.first(where: { $0.name == name }) else {
                FileHandle.standardError.write(Data("unknown scenario \(name); `OspreyCounts list` names them\n".utf8))
                exit(2)
            }
            let iterations = arguments.dropFirst().first.flatMap { Int($0) } ?? scenario.iterations
            try await run(scenario, iterations: iterations, work: work)
        }
    }

    static func run(_ scenario: Scenario, iterations: Int, work: Workspace) async throws {
        let prepared = try await scenario.prepare(work)
        for index in 0..<scenario.warmUp { try await prepared.step(-1 - index) }
        await prepared.settle()
        let start = ContinuousClock.now
        countedRegionBegins(scenario.name)
        for index in 0..<iterations { try await prepared.step(index) }
        await prepared.settle()
        countedRegionEnds(scenario.name)
        let elapsed = ContinuousClock.now - start
        try await prepared.finish()
        let ms = Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
        print("\(scenario.name) iterations \(iterations) wall_ms \(String(format: "%.1f", ms))")
    }
}

/// The start of the counted region: callgrind zeroes its counters on entering it
/// (`--zero-before`). Never inlined, so that callgrind sees the call.
@inline(never) @_optimize(none)
func countedRegionBegins(_ name: String) { markerSink = name.utf8.count }

/// The end of the counted region: callgrind dumps its counters on entering it (`--dump-before`).
@inline(never) @_optimize(none)
func countedRegionEnds(_ name: String) { markerSink = name.utf8.count }

nonisolated(unsafe) private var markerSink = 0

/// One counted scenario: what it prepares (not counted) and how many steps are counted.
struct Scenario: Sendable {
    let name: String
    /// Steps counted by default; the figures are per step.
    let iterations: Int
    /// Steps run before counting (first-use costs: libvips' operation cache, lazy metadata).
    var warmUp = 2
    let prepare: @Sendable (Workspace) async throws -> Prepared
}

/// A prepared scenario: one step (given its index; warm-up steps get negative ones), what makes
/// the steps' work finish before the count ends, and the teardown.
struct Prepared: Sendable {
    let step: @Sendable (Int) async throws -> Void
    var settle: @Sendable () async -> Void = {}
    var finish: @Sendable () async throws -> Void = {}
}

/// Every scenario, in the order the check runs them.
let allScenarios: [Scenario] = libraryScenarios + networkScenarios

/// The generated inputs and scratch directories, under one root.
struct Workspace: Sendable {
    let root: URL

    /// A fresh empty directory for scenario `name`'s caches.
    func scratch(_ name: String) throws -> URL {
        let url = root.appendingPathComponent("scratch-\(name)", isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A 4000 × 3000 JPEG photo (q90): `hubble_deep_field.jpg` stretched, made once.
    func photo() throws -> Data {
        try generated("photo-4000x3000.jpg") {
            try ImageEncoder(format: .jpeg, quality: 90).encode(try stretched(width: 4000, height: 3000))
        }
    }

    /// A 1000 × 750 progressive JPEG (q90, libvips' scan script), made once.
    func progressiveJPEG() throws -> Data {
        try generated("progressive-1000x750.jpg") {
            try ImageEncoder(format: .jpeg, quality: 90, interlace: true).encode(try stretched(width: 1000, height: 750))
        }
    }

    private func stretched(width: Int, height: Int) throws -> Image {
        let source = try Image(data: try FixtureImages.data("hubble_deep_field.jpg"))
        return try ImageProcessors.Resize(width: width, height: height, contentMode: .stretch).process(source)
    }

    private func generated(_ name: String, _ make: () throws -> Data) throws -> Data {
        let url = root.appendingPathComponent(name)
        if let data = try? Data(contentsOf: url) { return data }
        let data = try make()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
        return data
    }
}

struct CountsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
