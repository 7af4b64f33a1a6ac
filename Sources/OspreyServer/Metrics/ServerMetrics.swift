import CoreMetrics
import Metrics
import Osprey
import Prometheus

/// The server's metrics, recorded through swift-metrics into a Prometheus registry of the
/// server's own (not the process-wide bootstrap, so several servers can live in one process) and
/// rendered by swift-prometheus for `GET /metrics`.
///
/// Names:
/// - `osprey_requests_total{status}`;
/// - `osprey_request_duration_seconds{phase}` (histogram): `queue` (waiting for a worker),
///   `download` (each origin request, sent to last byte, `304`s included), `process` (decode and
///   processors from the cached original; on a source's first request also its download, which
///   `download` times on its own), `encode`, `total` (the whole request, hits included);
/// - `osprey_cache_hits_total{level}`: `result_memory`, `result_disk` (encoded results),
///   `original` (a variant made from the cached original, no download), `miss` (downloaded);
/// - `osprey_origin_fetches_total` (every response an origin sent, redirect hops and
///   revalidations included; a request that got none, a refused connection or a hang-up the loader
///   sends once more, is not counted), `osprey_origin_not_modified_total` (the `304`s among them);
/// - `osprey_coalesced_requests_total` (requests that joined an identical one in flight);
/// - `osprey_connections_total` (client connections accepted: with keep-alive, fewer than requests);
/// - `osprey_event_loop_hits_total` (memory hits answered on the connection's event loop by
///   ``MemoryHitHandler``, without a task; included in the request and hit counts);
/// - `osprey_decodes_total{shrunk_on_load}` (sources decoded for a result; `true` when the first
///   resize was folded into the decode with libvips shrink-on-load);
/// - `osprey_in_flight_requests`, `osprey_queued_requests`, `osprey_bytes_in_total`,
///   `osprey_bytes_out_total`;
/// - `osprey_result_store_total{outcome}` (the shared result store in a bucket, ``ResultStore``):
///   `hit`, `miss`, `lookup_failed` (down or slow: processed locally), `written`, `write_failed`;
/// - `osprey_memory_cache_bytes{cache}` and `osprey_memory_cache_limit_bytes{cache}`: what each
///   memory cache holds (the cost it charges against its limit) and that limit, read when
///   `/metrics` is rendered: `results` (encoded results, each charged its bytes, key and a fixed
///   overhead) and `sources` (the pipeline's memory cache: empty, since the server keeps originals on disk and
///   results encoded).
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let statusCounters = Locked<[Int: CoreMetrics.Counter]>([:])
    private let levelCounters = Locked<[String: CoreMetrics.Counter]>([:])
    private let storeCounters = Locked<[String: CoreMetrics.Counter]>([:])
    private let phaseTimers = Locked<[String: CoreMetrics.Timer]>([:])
    private let shrunkDecodes: CoreMetrics.Counter
    private let fullDecodes: CoreMetrics.Counter
    let inFlight: CoreMetrics.Meter
    let queued: CoreMetrics.Meter
    let originFetches: CoreMetrics.Counter
    let originNotModified: CoreMetrics.Counter
    let connections: CoreMetrics.Counter
    let eventLoopHits: CoreMetrics.Counter
    let coalesced: CoreMetrics.Counter
    let bytesIn: CoreMetrics.Counter
    let bytesOut: CoreMetrics.Counter
    private let memoryCacheGauges = Locked<[String: (bytes: CoreMetrics.Gauge, limit: CoreMetrics.Gauge)]>([:])

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)
        ]
        self.factory = factory
        inFlight = CoreMetrics.Meter(label: "osprey_in_flight_requests", factory: factory)
        queued = CoreMetrics.Meter(label: "osprey_queued_requests", factory: factory)
        originFetches = CoreMetrics.Counter(label: "osprey_origin_fetches_total", factory: factory)
        originNotModified = CoreMetrics.Counter(label: "osprey_origin_not_modified_total", factory: factory)
        connections = CoreMetrics.Counter(label: "osprey_connections_total", factory: factory)
        eventLoopHits = CoreMetrics.Counter(label: "osprey_event_loop_hits_total", factory: factory)
        shrunkDecodes = CoreMetrics.Counter(label: "osprey_decodes_total", dimensions: [("shrunk_on_load", "true")], factory: factory)
        fullDecodes = CoreMetrics.Counter(label: "osprey_decodes_total", dimensions: [("shrunk_on_load", "false")], factory: factory)
        coalesced = CoreMetrics.Counter(label: "osprey_coalesced_requests_total", factory: factory)
        bytesIn = CoreMetrics.Counter(label: "osprey_bytes_in_total", factory: factory)
        bytesOut = CoreMetrics.Counter(label: "osprey_bytes_out_total", factory: factory)
    }

    /// Counts a response with `status`.
    func request(status: Int) {
        statusCounters.withLock { counters in
            if counters[status] == nil {
                counters[status] = CoreMetrics.Counter(label: "osprey_requests_total", dimensions: [("status", String(status))], factory: factory)
            }
            return counters[status]!
        }.increment()
    }

    /// Counts a cache lookup answered at `level`.
    func cache(_ level: String) {
        levelCounters.withLock { counters in
            if counters[level] == nil {
                counters[level] = CoreMetrics.Counter(label: "osprey_cache_hits_total", dimensions: [("level", level)], factory: factory)
            }
            return counters[level]!
        }.increment()
    }

    /// Counts an outcome of the result store (`hit`, `miss`, `lookup_failed`, `written`, `write_failed`).
    func resultStore(_ outcome: String) {
        storeCounters.withLock { counters in
            if counters[outcome] == nil {
                counters[outcome] = CoreMetrics.Counter(label: "osprey_result_store_total", dimensions: [("outcome", outcome)], factory: factory)
            }
            return counters[outcome]!
        }.increment()
    }

    /// Counts a decode of a source, shrunk on load or not.
    func decode(shrunkOnLoad: Bool) {
        (shrunkOnLoad ? shrunkDecodes : fullDecodes).increment()
    }

    /// Records `duration` for `phase`.
    func record(_ phase: String, _ duration: Duration) {
        phaseTimers.withLock { timers in
            if timers[phase] == nil {
                timers[phase] = CoreMetrics.Timer(label: "osprey_request_duration_seconds", dimensions: [("phase", phase)], factory: factory)
            }
            return timers[phase]!
        }.record(duration: duration)
    }

    /// Records what the memory cache `name` holds and its limit, in bytes.
    func memoryCache(_ name: String, bytes: Int, limit: Int) {
        let gauges = memoryCacheGauges.withLock { gauges in
            if gauges[name] == nil {
                gauges[name] = (
                    CoreMetrics.Gauge(label: "osprey_memory_cache_bytes", dimensions: [("cache", name)], factory: factory),
                    CoreMetrics.Gauge(label: "osprey_memory_cache_limit_bytes", dimensions: [("cache", name)], factory: factory)
                )
            }
            return gauges[name]!
        }
        gauges.bytes.record(bytes)
        gauges.limit.record(limit)
    }

    /// The Prometheus text exposition.
    func render() -> String { registry.emitToString() }
}
