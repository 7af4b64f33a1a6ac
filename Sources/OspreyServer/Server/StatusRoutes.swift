import Foundation
import Hummingbird
import Osprey

/// `GET /health` and `GET /metrics`.
enum StatusRoutes {
    /// A 1x1 PNG decoded by every health check.
    static let probe = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!

    static func add(to router: Router<some RequestContext>, service: ImageService) {
        router.get("/health") { _, _ -> Response in
            var problems: [String] = []
            do {
                let image = try Image(data: probe)
                if image.width != 1 { problems.append("libvips decoded the probe image at the wrong size") }
            } catch {
                problems.append("libvips cannot decode the probe image: \(error)")
            }
            if service.limiter.isStuck(after: .seconds(30)) {
                problems.append("the worker queue is stuck: \(service.limiter.queued) waiting, nothing finished for 30 s")
            }
            let body = problems.isEmpty
                ? "ok: \(service.limiter.running) running, \(service.limiter.queued) queued\n"
                : problems.joined(separator: "; ") + "\n"
            return Response(status: problems.isEmpty ? .ok : .serviceUnavailable,
                            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        router.get("/metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: service.metrics.render())))
        }
    }
}
