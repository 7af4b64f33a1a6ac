import Foundation

/// Runs the `osprey` executable built beside the test bundle and captures its output.
enum CLIRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the process ended by a signal (a crash) rather than exiting.
        var crashed: Bool
    }

    /// The built `osprey` binary: `$OSPREY_CLI`, or the one in the test bundle's directory.
    static var executable: URL? {
        if let override = ProcessInfo.processInfo.environment["OSPREY_CLI"] { return URL(fileURLWithPath: override) }
        let bundle = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        var directory = bundle.deletingLastPathComponent()
        // On Linux the test runner is `.../debug/OspreyPackageTests.xctest`; on macOS it sits inside a bundle.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("osprey")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    static func run(_ arguments: [String]) throws -> Result {
        guard let executable else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "osprey (run `swift build` first)"]) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
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
}
