import Foundation
import Hummingbird
import Osprey

/// `GET /health/live`, `GET /health/ready` (also `GET /health`, imgproxy's, and `GET /healthcheck`,
/// thumbor's, answering its `WORKING`) and `GET /metrics`.
///
/// Liveness: libvips decodes a tiny image. Readiness: that, the worker queue is neither stuck nor
/// full (a new job would get 429), and the server is not draining (SIGTERM with a drain time): what a load balancer should check.
enum StatusRoutes {
    /// Paths the router answers, never read as image URLs.
    static let paths: Set<String> = ["/health", "/health/live", "/health/ready", "/healthcheck", "/metrics", "/favicon.ico"]

    /// A 1x1 PNG decoded by every health check.
    static let probe = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!

    static func add(to router: Router<some RequestContext>, service: ImageService, drain: DrainState) {
        router.get("/health/live") { _, _ -> Response in
            health(problems: decodeProblems(), service: service)
        }
        let ready: @Sendable (_ healthyBody: String?) -> Response = { healthyBody in
            var problems = decodeProblems()
            if service.limiter.isStuck(after: .seconds(30)) {
                problems.append("the worker queue is stuck: \(service.limiter.queued) waiting, nothing finished for 30 s")
            }
            // Saturated: a new job would be refused, so a load balancer should send it elsewhere.
            if service.limiter.isSaturated {
                problems.append("the worker queue is full: \(service.limiter.running) running, \(service.limiter.queued) waiting; new jobs get 429")
            }
            if drain.isDraining { problems.append("draining: shutting down, send no new requests") }
            return health(problems: problems, service: service, healthyBody: healthyBody)
        }
        router.get("/health/ready") { _, _ -> Response in ready(nil) }
        router.get("/health") { _, _ -> Response in ready(nil) }
        router.get("/healthcheck") { _, _ -> Response in ready("WORKING") }
        router.get("/metrics") { _, _ -> Response in
            service.recordMemoryCaches()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: service.metrics.render())))
        }
    }

    private static func decodeProblems() -> [String] {
        do {
            let image = try Image(data: probe)
            return image.width == 1 ? [] : ["libvips decoded the probe image at the wrong size"]
        } catch {
            return ["libvips cannot decode the probe image: \(error)"]
        }
    }

    private static func health(problems: [String], service: ImageService, healthyBody: String? = nil) -> Response {
        let body =
            problems.isEmpty
            ? (healthyBody ?? "ok: \(service.limiter.running) running, \(service.limiter.queued) queued") + "\n"
            : problems.joined(separator: "; ") + "\n"
        return Response(
            status: problems.isEmpty ? .ok : .serviceUnavailable,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
