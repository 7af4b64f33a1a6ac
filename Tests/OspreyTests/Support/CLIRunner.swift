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

    static func run(_ arguments: [String]) throws -> Result {
        guard let executable = OspreyBinary.url else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "osprey (run `swift build` first)"])
        }
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
