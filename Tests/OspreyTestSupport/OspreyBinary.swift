import Foundation

/// The built `osprey` executable, for the tests that run it as a process (both test targets use
/// this one locator), and the package's other executables (``product(_:environment:)``).
public enum OspreyBinary {
    /// `$OSPREY_CLI` (or `$OSPREY_BIN`) when set, else the `osprey` beside the test runner
    /// (`.build/debug/osprey`) or up to three directories above it (on macOS the runner sits
    /// inside a bundle); `nil` when there is none (run `swift build` first).
    public static var url: URL? { product("osprey", environment: ["OSPREY_CLI", "OSPREY_BIN"]) }

    /// The executable product `name` of this package: the path in the first of the `environment`
    /// variables that is set (default none), else the `name` beside the test runner or up to
    /// three directories above it; `nil` when there is none (run `swift build` first).
    public static func product(_ name: String, environment names: [String] = []) -> URL? {
        let environment = ProcessInfo.processInfo.environment
        for variable in names {
            if let path = environment[variable], !path.isEmpty { return URL(fileURLWithPath: path) }
        }
        let runner = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
