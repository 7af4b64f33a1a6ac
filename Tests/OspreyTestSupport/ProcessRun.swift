import Foundation

/// A child process run to its end with a deadline: the one way the tests run a program and wait
/// for it synchronously.
public struct ProcessRun: Sendable {
    /// The exit status (or the signal's number when ``crashed``).
    public var status: Int32
    /// What it wrote to standard output.
    public var stdout: Data
    /// What it wrote to standard error.
    public var stderr: Data
    /// Whether it ended by a signal (a crash) rather than exiting.
    public var crashed: Bool

    /// Standard output as UTF-8 text.
    public var output: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var errors: String { String(decoding: stderr, as: UTF8.self) }

    /// Runs `executable` with `arguments` (and `environment` added to this process's own) and waits
    /// for it; when it is still running after `limit` (default 120 seconds) it is killed and
    /// ``DeadlineExceeded`` naming the command is thrown. Output goes to files, read after the
    /// exit: a pipe nobody reads would block a child that fills it.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], within limit: Duration = .seconds(120)
    ) throws -> ProcessRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout"), errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        if exited.wait(timeout: .now() + seconds) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            process.waitUntilExit()
            let command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
            throw DeadlineExceeded(what: "`\(command)` to exit (killed)", limit: limit)
        }
        process.waitUntilExit()
        return ProcessRun(
            status: process.terminationStatus, stdout: try Data(contentsOf: outURL), stderr: try Data(contentsOf: errURL),
            crashed: process.terminationReason == .uncaughtSignal)
    }

    /// ``run(_:_:environment:within:)`` without blocking a thread of the Swift concurrency pool:
    /// the wait runs on a Dispatch thread. An in-process server of the same test (Hummingbird runs
    /// its handlers on that pool, two threads on a 2-core machine) keeps answering meanwhile.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], within limit: Duration = .seconds(120)
    ) async throws -> ProcessRun {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try run(executable, arguments, environment: environment, within: limit) })
            }
        }
    }
}
