import Foundation
import OspreyTestSupport

/// Runs the `osprey` executable built beside the test bundle and captures its output.
enum CLIRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the process ended by a signal (a crash) rather than exiting.
        var crashed: Bool
    }

    /// Runs `osprey` with `arguments`; with `addressSpaceLimit` (bytes), under `prlimit --as`;
    /// with `environment` added to the test process's own.
    static func run(_ arguments: [String], addressSpaceLimit: Int? = nil, environment: [String: String] = [:]) throws -> Result {
        guard let executable = OspreyBinary.url else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "osprey (run `swift build` first)"])
        }
        let process = Process()
        if let addressSpaceLimit {
            process.executableURL = URL(fileURLWithPath: prlimit)
            process.arguments = ["--as=\(addressSpaceLimit)", "--", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // Output goes to files, read after exit: a pipe the runner is not reading at the moment
        // would block a child that fills it (stderr under LD_DEBUG, say).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-cli-run-\(UUID().uuidString)")
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
        try process.run()
        // No run waits forever: a child still running after `timeLimit` is killed (and reported
        // as crashed).
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        let outData = try Data(contentsOf: outURL), errData = try Data(contentsOf: errURL)
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self), crashed: process.terminationReason == .uncaughtSignal)
    }

    static let prlimit = "/usr/bin/prlimit"

    /// How long one run may take before it is killed.
    static let timeLimit: TimeInterval = 120

    /// Whether `run(_:addressSpaceLimit:)` can work here: util-linux's prlimit is installed and the
    /// binaries are not built with the thread sanitizer (whose shadow memory is terabytes of
    /// address space).
    static var canLimitAddressSpace: Bool {
        FileManager.default.isExecutableFile(atPath: prlimit) && dlsym(nil, "__tsan_init") == nil
    }
}
