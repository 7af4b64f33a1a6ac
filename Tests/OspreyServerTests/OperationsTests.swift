import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server operations: back-pressure, health, metrics, graceful shutdown", .serialized, .timeLimit(.minutes(5)))
struct OperationsTests {
    @Test("a full queue answers 429 with Retry-After at once")
    func backPressure() async throws {
        let origin = try await LoopbackOrigin.start()
        for index in 0..<6 { origin.set("/slow\(index).jpg", body: TestImages.photo, delay: .seconds(1)) }
        let server = try await ServerHarness.start {
            $0.workers = 1
            $0.queue = 1
        }
        let replies = try await withThrowingTaskGroup(of: ServerHarness.Reply.self) { group in
            for index in 0..<6 {
                group.addTask { try await server.get("/unsafe/40x40/\(origin.address("/slow\(index).jpg"))") }
            }
            return try await group.reduce(into: [ServerHarness.Reply]()) { $0.append($1) }
        }
        let busy = replies.filter { $0.status == 429 }
        #expect(busy.count >= 1)
        #expect(busy.allSatisfy { $0.header("Retry-After") == "1" && $0.header("Cache-Control") == "no-store" })
        #expect(replies.filter { $0.status == 200 }.count >= 2)
        #expect(replies.allSatisfy { $0.status == 200 || $0.status == 429 })
        await server.stop()
        await origin.stop()
    }

    @Test("/health decodes with libvips and reports the queue; /metrics is Prometheus text")
    func healthAndMetrics() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let health = try await server.get("/health")
        #expect(health.status == 200)
        #expect(health.text.hasPrefix("ok"))
        _ = try await server.get("/unsafe/30x30/\(origin.address("/photo.jpg"))")
        _ = try await server.get("/unsafe/30x30/filters:bad()/\(origin.address("/photo.jpg"))")
        let metrics = try await server.get("/metrics")
        #expect(metrics.status == 200)
        for name in [
            "osprey_requests_total{status=\"200\"} 1", "osprey_requests_total{status=\"400\"} 1",
            "osprey_request_duration_seconds_bucket", "phase=\"queue\"", "phase=\"download\"", "phase=\"process\"", "phase=\"encode\"",
            "osprey_in_flight_requests", "osprey_queued_requests", "osprey_origin_fetches_total 1",
            "osprey_bytes_in_total", "osprey_bytes_out_total", "osprey_cache_hits_total{level=\"miss\"} 1"
        ] {
            #expect(metrics.text.contains(name), "\(name)")
        }
        await server.stop()
        await origin.stop()
    }

    @Test("the worker queue reports stuck when jobs wait and nothing moves")
    func stuckQueue() async throws {
        let limiter = WorkLimiter(workers: 1, queueLimit: 4)
        #expect(!limiter.isStuck(after: .zero))
        let gate = AsyncStream<Void>.makeStream()
        let running = Task { try await limiter.run { () async throws(ServerError) in for await _ in gate.stream {} } }
        // The second job queues only once the first holds the worker (tasks start in any order).
        try await eventually("a running job") { limiter.running > 0 }
        let waiting = Task { try await limiter.run { () async throws(ServerError) in } }
        try await eventually("a queued job") { limiter.queued > 0 }
        try await Task.sleep(for: .milliseconds(20))
        #expect(limiter.isStuck(after: .milliseconds(10)))
        gate.continuation.finish()
        _ = try await running.value("the running job")
        _ = try await waiting.value("the queued job")
        #expect(!limiter.isStuck(after: .zero))
    }

    @Test("a client that disconnects cancels its job; a shared job goes on")
    func disconnectCancels() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/hang.jpg", body: TestImages.photo, delay: .seconds(30))
        let server = try await ServerHarness.start()
        let service = server.server.service
        let impatient = Task { try await server.get("/unsafe/40x40/\(origin.address("/hang.jpg"))", timeout: .milliseconds(300)) }
        _ = try? await impatient.value
        // The only request left: its job is cancelled (the origin is still sleeping).
        var waited = 0
        let downloader = service.pipeline.configuration.downloader
        while (service.jobs.count > 0 || downloader.runningCount + downloader.queuedCount > 0) && waited < 200 {
            try await Task.sleep(for: .milliseconds(50))
            waited += 1
        }
        #expect(service.jobs.count == 0)
        #expect(downloader.runningCount + downloader.queuedCount == 0, "the origin fetch is cancelled too")
        await server.stop()
        await origin.stop()
    }

    @Test("graceful shutdown lets an in-flight request finish")
    func gracefulShutdown() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/slow.jpg", body: TestImages.photo, delay: .milliseconds(1500))
        let server = try await ServerHarness.start()
        let inFlight = Task { try await server.get("/unsafe/40x40/\(origin.address("/slow.jpg"))") }
        try await eventually("the origin to be asked for /slow.jpg") { origin.hits("/slow.jpg") > 0 }
        await server.group.triggerGracefulShutdown()
        let reply = try await inFlight.value("the in-flight request")
        #expect(reply.status == 200)
        #expect(reply.image?.width == 40)
        _ = try? await server.task.value("the server to shut down")
        await origin.stop()
    }
}
