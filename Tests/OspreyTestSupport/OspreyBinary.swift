import Foundation

/// The built `osprey` executable, for the tests that run it as a process (both test targets use
/// this one locator).
public enum OspreyBinary {
    /// `$OSPREY_CLI` (or `$OSPREY_BIN`) when set, else the `osprey` beside the test runner
    /// (`.build/debug/osprey`) or up to three directories above it (on macOS the runner sits
    /// inside a bundle); `nil` when there is none (run `swift build` first).
    public static var url: URL? {
        let environment = ProcessInfo.processInfo.environment
        for name in ["OSPREY_CLI", "OSPREY_BIN"] {
            if let path = environment[name], !path.isEmpty { return URL(fileURLWithPath: path) }
        }
        let runner = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("osprey")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
