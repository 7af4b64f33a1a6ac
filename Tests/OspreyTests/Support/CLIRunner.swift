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
    /// with `environment` added to the test process's own. A run still going after ``timeLimit``
    /// is killed and fails with ``DeadlineExceeded``.
    static func run(_ arguments: [String], addressSpaceLimit: Int? = nil, environment: [String: String] = [:]) async throws -> Result {
        guard let executable = OspreyBinary.url else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "osprey (run `swift build` first)"])
        }
        let run =
            if let addressSpaceLimit {
                try await ProcessRun.run(
                    URL(fileURLWithPath: prlimit), ["--as=\(addressSpaceLimit)", "--", executable.path] + arguments,
                    environment: environment, within: timeLimit)
            } else {
                try await ProcessRun.run(executable, arguments, environment: environment, within: timeLimit)
            }
        return Result(status: run.status, stdout: run.output, stderr: run.errors, crashed: run.crashed)
    }

    static let prlimit = "/usr/bin/prlimit"

    /// How long one run may take before it is killed.
    static let timeLimit: Duration = .seconds(120)

    /// Whether `run(_:addressSpaceLimit:)` can work here: util-linux's prlimit is installed and the
    /// binaries are not built with the thread sanitizer (whose shadow memory is terabytes of
    /// address space).
    static var canLimitAddressSpace: Bool {
        FileManager.default.isExecutableFile(atPath: prlimit) && dlsym(nil, "__tsan_init") == nil
    }
}
