import ServiceLifecycle
import Synchronization
import UnixSignals

/// Whether the server is draining: still serving, but telling load balancers to send no more
/// (`/health/ready` answers 503).
final class DrainState: Sendable {
    private let flag = Atomic<Bool>(false)

    /// `true` once a drain has begun.
    var isDraining: Bool { flag.load(ordering: .relaxed) }

    /// Begins the drain.
    func start() { flag.store(true, ordering: .relaxed) }
}

/// Drains on SIGTERM before the graceful shutdown: readiness turns 503 at once, requests go on
/// being served for ``ServerConfiguration/drainTimeout`` (long enough for a load balancer's
/// health check to move traffic away), then this service returns and the service group shuts
/// down gracefully (stop accepting, finish in-flight requests, close the HTTP client).
struct DrainService: Service {
    let state: DrainState
    let drain: Duration

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigterm)
        // A graceful shutdown from elsewhere (SIGINT) ends the wait without draining.
        for await _ in signals.cancelOnGracefulShutdown() {
            state.start()
            try? await Task.sleep(for: drain)
            return
        }
    }
}
