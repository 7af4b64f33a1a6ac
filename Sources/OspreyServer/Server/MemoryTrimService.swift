import ServiceLifecycle

/// Gives freed memory back to the system when the server goes idle after work (``Malloc/trim()``):
/// after a burst of decodes the allocator would otherwise keep the burst's peak. Checks every
/// `interval` and trims once per idle spell (no job running or waiting, some finished since the
/// last trim), so a busy server never pays for it and an idle one trims once.
struct IdleTrimService: Service {
    let limiter: WorkLimiter
    var interval: Duration = .seconds(10)

    func run() async throws {
        var trimmedAfter: UInt64 = 0
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            let (isIdle, finished) = limiter.idle
            if isIdle, finished != trimmedAfter {
                Malloc.trim()
                trimmedAfter = finished
            }
        }
    }
}
