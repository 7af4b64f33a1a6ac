import Foundation
import Hummingbird
import Osprey
import OspreyTestSupport

/// A real HTTP origin on loopback (Hummingbird) serving resources the test sets, counting hits.
/// A resource with an `ETag` (or only a `Last-Modified`) answers a conditional request that
/// names it (`If-None-Match`, `If-Modified-Since`) with `304` and no body, as origins do.
final class TestOrigin: Sendable {
    struct Resource: Sendable {
        var status = 200
        var headers: [String: String] = [:]
        var body = Data()
        /// Waits this long before answering (coalescing and back-pressure tests).
        var delay: Duration?
    }

    private struct State {
        var resources: [String: Resource] = [:]
        var hits: [String: Int] = [:]
        var statuses: [String: [Int: Int]] = [:]
        var authorities: [String: String] = [:]
        var task: Task<Void, any Error>?
        var port = 0
    }

    private let state = Locked(State())

    var port: Int { state.withLock { $0.port } }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func set(_ path: String, _ resource: Resource) { state.withLock { $0.resources[path] = resource } }

    func set(_ path: String, body: Data, contentType: String = "image/jpeg", delay: Duration? = nil) {
        set(path, Resource(headers: ["Content-Type": contentType], body: body, delay: delay))
    }

    func hits(_ path: String) -> Int { state.withLock { $0.hits[path, default: 0] } }

    /// The `Host` of the last request for `path`.
    func host(_ path: String) -> String? { state.withLock { $0.authorities[path] } }

    /// Answers to `path` with `status`.
    func hits(_ path: String, status: Int) -> Int { state.withLock { $0.statuses[path]?[status] ?? 0 } }

    /// Starts an origin on `port` (0: any free port). Throws when it cannot bind.
    static func start(port: Int = 0) async throws -> TestOrigin {
        let origin = TestOrigin()
        let router = Router()
        router.get("**") { request, _ -> Response in
            let path = request.uri.path
            let resource = origin.state.withLock { state -> Resource? in
                state.hits[path, default: 0] += 1
                state.authorities[path] = request.head.authority
                return state.resources[path]
            }
            guard let resource else { return Response(status: .notFound) }
            if let delay = resource.delay { try await Task.sleep(for: delay) }
            let etag = resource.headers.first { $0.key.lowercased() == "etag" }?.value
            let lastModified = resource.headers.first { $0.key.lowercased() == "last-modified" }?.value
            let notModified =
                resource.status == 200
                && (etag.map { request.headers[.ifNoneMatch] == $0 } ?? lastModified.map { request.headers[.ifModifiedSince] == $0 } ?? false)
            let status = notModified ? 304 : resource.status
            origin.state.withLock { $0.statuses[path, default: [:]][status, default: 0] += 1 }
            var headers = HTTPFields()
            for (name, value) in resource.headers {
                switch name.lowercased() {
                case "content-type": headers[.contentType] = value
                case "location": headers[.location] = value
                case "cache-control": headers[.cacheControl] = value
                case "etag": headers[.eTag] = value
                case "last-modified": headers[.lastModified] = value
                default: break
                }
            }
            if notModified { return Response(status: .notModified, headers: headers) }
            return Response(
                status: .init(code: resource.status), headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: resource.body)))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            })
        let task = Task {
            defer { continuation.finish() }
            try await app.runService()
        }
        let bound = try await withDeadline("the test origin to listen on port \(port)") {
            var bound = 0
            for await value in ports { bound = value }
            return bound
        }
        guard bound > 0 else {
            task.cancel()
            throw OriginError(message: "the test origin could not bind port \(port)")
        }
        origin.state.withLock {
            $0.task = task
            $0.port = bound
        }
        return origin
    }

    /// The one origin on the fixtures' fixed port (signatures cover the image URL, port included),
    /// shared by every test that uses the committed client URLs and never stopped, so that suites
    /// running at the same time do not compete for the port. It serves `/photo.jpg`.
    static func fixtureOrigin(port: Int) async throws -> TestOrigin {
        try await FixtureOriginBox.shared.origin(port: port)
    }

    /// Stops the origin: waits at most 60 seconds for it to close its port.
    func stop() async {
        guard let task = state.withLock({ $0.task }) else { return }
        task.cancel()
        _ = try? await withDeadline("the test origin on port \(port) to stop") { _ = try? await task.value }
    }
}

/// Starts the fixture origin once. The start is a task every caller awaits: the actor is
/// reentrant across the await, so a stored origin alone let two suites both start one.
actor FixtureOriginBox {
    static let shared = FixtureOriginBox()
    private var starting: Task<TestOrigin, any Error>?

    func origin(port: Int) async throws -> TestOrigin {
        let task =
            starting
            ?? Task {
                let origin = try await TestOrigin.start(port: port)
                origin.set("/photo.jpg", body: TestImages.photo)
                return origin
            }
        starting = task
        return try await task.value
    }
}

struct OriginError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
