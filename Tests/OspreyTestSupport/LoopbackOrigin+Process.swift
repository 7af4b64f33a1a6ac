import Foundation

extension LoopbackOrigin {
    /// Runs an origin serving the files of `directories` (rule 3) in this process until the process
    /// that started it exits or sends SIGTERM: what `OspreyOrigin DIR...` (scripts, the soak) and
    /// `OspreyBench origin DIR...` (the benchmark harness) run. Prints `listening PORT` once bound;
    /// the port is `$ORIGIN_PORT` (default 0: any free port); with `$ORIGIN_LOG` it appends
    /// `GET <path>` per request to that file; with `$ORIGIN_RATE` (bytes per second) it sends the
    /// bodies at that rate.
    public static func runAsProcess(directories: [String]) async throws -> Never {
        let environment = ProcessInfo.processInfo.environment
        let origin = try await LoopbackOrigin.start(
            directories: directories.map { URL(fileURLWithPath: $0, isDirectory: true) },
            port: environment["ORIGIN_PORT"].flatMap { Int($0) } ?? 0,
            bytesPerSecond: environment["ORIGIN_RATE"].flatMap { Int($0) },
            log: environment["ORIGIN_LOG"].map { URL(fileURLWithPath: $0) })
        let parent = getppid()
        print("listening \(origin.port)")
        fflush(nil)
        while getppid() == parent { try await Task.sleep(for: .milliseconds(500)) }
        exit(0)
    }
}
