import ServiceLifecycle

/// Gives freed memory back to the system (``Malloc/trim()``) once every `interval` in which jobs
/// finished, whether the server is busy or has gone idle.
///
/// glibc keeps freed blocks in its arenas for reuse and returns only the top of each by itself:
/// after multi-megabyte bodies and decodes of changing sizes, RSS would climb in steps under a
/// long mixed load. A trim walks the arenas and releases their free pages (a few milliseconds
/// every ten seconds); the blocks themselves stay in the arenas, so decodes do not pay a fresh
/// mapping's page faults each time, as they did when glibc's mapping threshold was fixed at 1 MiB
/// (a quarter of the photo misses' rate).
struct MemoryTrimService: Service {
    let limiter: WorkLimiter
    var interval: Duration = .seconds(10)
    /// What a trim does (``Malloc/trim()``; tests count calls instead).
    var trim: @Sendable () -> Void = { Malloc.trim() }

    func run() async throws {
        var trimmedAfter: UInt64 = 0
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            let finished = limiter.finished
            if finished != trimmedAfter {
                trim()
                trimmedAfter = finished
            }
        }
    }
}
