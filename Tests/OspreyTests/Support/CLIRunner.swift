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

    /// Runs `osprey` with `arguments`; with `addressSpaceLimit` (bytes), under `prlimit --as`.
    static func run(_ arguments: [String], addressSpaceLimit: Int? = nil) throws -> Result {
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
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes before waiting so a chatty child cannot block on a full pipe.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self), crashed: process.terminationReason == .uncaughtSignal)
    }

    static let prlimit = "/usr/bin/prlimit"

    /// Whether `run(_:addressSpaceLimit:)` can work here: util-linux's prlimit is installed and the
    /// binaries are not built with the thread sanitizer (whose shadow memory is terabytes of
    /// address space).
    static var canLimitAddressSpace: Bool {
        FileManager.default.isExecutableFile(atPath: prlimit) && dlsym(nil, "__tsan_init") == nil
    }
}
