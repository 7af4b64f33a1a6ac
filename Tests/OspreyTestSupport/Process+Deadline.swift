import Foundation

extension Process {
    /// Waits until the process exits and returns its termination status; when it is still running
    /// after `limit` (default 120 seconds) it is killed (SIGKILL) and ``DeadlineExceeded`` naming
    /// `what` is thrown. Polls every 10 ms without blocking a thread.
    public func exitStatus(within limit: Duration = .seconds(120), _ what: @autoclosure () -> String) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while isRunning {
            guard ContinuousClock.now < deadline else {
                kill(processIdentifier, SIGKILL)
                throw DeadlineExceeded(what: what(), limit: limit)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return terminationStatus
    }

    /// The next line the process writes to `pipe` (without its newline; what came before the end
    /// when it ends without one), or ``DeadlineExceeded`` naming `what` when none came within
    /// `limit` (default 60 seconds; the process is then killed).
    public func nextLine(of pipe: Pipe, within limit: Duration = .seconds(60), _ what: @autoclosure () -> String) async throws -> String {
        let handle = pipe.fileHandleForReading
        do {
            return try await withDeadline(what(), within: limit) {
                try await Task.detached { () -> String in
                    var bytes = Data()
                    while let byte = try handle.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { bytes += byte }
                    return String(decoding: bytes, as: UTF8.self)
                }.value
            }
        } catch let error as DeadlineExceeded {
            kill(processIdentifier, SIGKILL)
            throw error
        }
    }
}
