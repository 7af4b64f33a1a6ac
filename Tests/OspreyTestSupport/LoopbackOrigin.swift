import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Osprey

/// The one loopback HTTP/1.1 origin of the tests and the benchmarks: swift-nio on 127.0.0.1, a
/// random port unless told, every answer with `Content-Length` unless the route says otherwise,
/// keep-alive. It records every request (``Snapshot``) and answers by the first rule that matches
/// the request's path (the query only makes URLs distinct, except where a route reads it):
///
/// 1. A resource set for the exact path (``set(_:_:)``): its status, headers, body, after its delay;
///    a `200` resource with an `ETag` (or only a `Last-Modified`) answers a request naming it in
///    `If-None-Match` (`If-Modified-Since`) with `304` and no body.
/// 2. A route, by the path's first component (the rest of the path only makes URLs distinct):
///    - `/image/…`: ``image`` (default: `hopper.jpg`).
///    - `/gated/<gate>/…`: the body set as `<gate>` (``setBody(_:_:cuts:)``, up to its first cut) or
///      the first 100 bytes of ``image``; the rest once the test opens `<gate>` (``openGate(_:)``).
///    - `/gatedchunked/<gate>/…`: like `/gated` without `Content-Length`, 2 KiB before the gate.
///    - `/chunked/…`: ``image`` in 1 KiB chunks, no `Content-Length`.
///    - `/status/<code>…`: that status with a short text body (`Retry-After: 1` with 429 and 503).
///    - `/html/…`: `200` with an HTML page.
///    - `/redirect/<n>`: `302` to `/redirect/<n-1>`; `/redirect/0` is the image.
///    - `/flaky/<name>?fail=<k>&code=<c>`: the first k hits answer c (`Retry-After: 0`), then the image.
///    - `/resumable/<name>`: `Accept-Ranges: bytes`, `ETag: "v1"`; the first hit drops the connection
///      after half the body; later hits honour `Range` + `If-Range` with `206`.
///    - `/gatedresumable/<gate>/…`: like `/gated` with `Accept-Ranges` and `ETag: "v1"`; honours
///      `Range` + `If-Range` with `206`.
///    - `/conditional/…`: `304` when `If-None-Match: "v1"`, else the image with `ETag: "v1"`.
///    - `/maxage/<seconds>/…`: like `/conditional` with `Cache-Control: max-age=<seconds>`.
///    - `/drop/…`: the head and half the body, then the connection is closed.
///    - `/hangup/<name>?times=<k>`: the first k hits close the connection without answering, then
///      the image.
///    - `/auth/…`: the image when `Authorization` is `Basic dXNlcjpwYXNz` (user:pass), else `401`.
///    - `/paced/<name>/…`: the body set as `<name>`, in pieces cut at its cuts: the head at once,
///      piece `i` (from 0) once gate `<name>-<i>` is opened.
///    - `/slow/<name>/…?chunk=<bytes>&pause=<ms>`: the body set as `<name>`, `chunk` bytes (default
///      4096) at a time with a pause of `pause` ms (default 50) after each: a slow link.
///    - `/delay/<ms>/<rest>`: after `ms` milliseconds, the answer to `/<rest>`.
///    - `/held/…`: once the test opens gate `held`, the answer of rule 3 for the whole path.
///    - The soak's faults over named bodies (`/img/`, `/stall/`, `/reset/`, `/trunc/`, `/cl-big/`,
///      `/mut/<seed>/`, ...): see `LoopbackRoute.fault()`.
/// 3. A body made by the generator (``setGenerator(_:)``) for the whole path, else a body named as
///    the path's last component (`start(bodies:directories:)`, so `/any/prefix/hopper.jpg?r=1`
///    serves `hopper.jpg`), sent at `bytesPerSecond` when set; `GET /__hits` answers how many
///    bodies rule 3 served (the benchmark harness's origin process, `OspreyBench origin DIR...`).
///    Anything else: `404`.
public final class LoopbackOrigin: Sendable {
    /// A response set for one exact path (rule 1).
    public struct Resource: Sendable {
        /// The status (default 200).
        public var status: Int
        /// The response headers (default none; `Content-Length` is always added).
        public var headers: [String: String]
        /// The body (default empty).
        public var body: Data
        /// How long to wait before answering (default nil: at once).
        public var delay: Duration?

        /// A resource; every argument as its property.
        public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: Duration? = nil) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }
    }

    /// What the origin has seen.
    public struct Snapshot: Sendable {
        /// Requests per URI (path and query).
        public var hits: [String: Int] = [:]
        /// Requests per path (without the query).
        public var pathHits: [String: Int] = [:]
        /// Answers per path, by status.
        public var statuses: [String: [Int: Int]] = [:]
        /// The `Host` of the last request per path.
        public var hosts: [String: String] = [:]
        /// URIs in the order their requests arrived.
        public var log: [String] = []
        /// Responses in progress now, and the most ever at once.
        public var inFlight = 0
        /// The most responses ever in progress at once.
        public var maxInFlight = 0
        /// URIs whose connection closed before their response was complete.
        public var aborted: [String] = []
        /// The request headers (names lowercased) last seen per URI.
        public var headers: [String: [String: String]] = [:]
        /// Completed responses per URI.
        public var completed: [String: Int] = [:]
        /// Bodies served by rule 3 (generated or named).
        public var bodiesServed = 0
        /// Connections accepted (whether or not a request came on them).
        public var connections = 0
    }

    struct State {
        var snapshot = Snapshot()
        var resources: [String: Resource] = [:]
        var named: [String: ByteBuffer] = [:]
        var bodies: [String: (body: Data, cuts: [Int])] = [:]
        var generator: (@Sendable (String) -> Data?)?
        var openGates: Set<String> = []
        var gateWaiters: [String: [@Sendable () -> Void]] = [:]
        var waiters: [(id: Int, predicate: @Sendable (Snapshot) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter = 0
        var connections: [ObjectIdentifier: any Channel] = [:]
        var stopped = false
    }

    /// The port it listens on.
    public let port: Int
    /// The image of the routes that serve one (`/image`, `/gated`, `/redirect/0`, ...).
    public let image: Data
    let state: Locked<State>
    /// The pause after each 16 KiB chunk of a named body; nil: the body at once.
    let pause: TimeAmount?
    /// Where each request's line goes; nil: nowhere.
    private let logFile: Locked<FileHandle?>
    private let listener: Locked<(any Channel)?> = Locked(nil)

    /// Starts an origin on `port` (default 0: any free port) on swift-nio's shared event loops,
    /// serving `bodies` (name → bytes, default none) and every file of `directories` (default none)
    /// by their names (rule 3); `image` (default: the test image `hopper.jpg`) for the routes;
    /// named bodies sent at `bytesPerSecond` (default nil: at once) in 16 KiB chunks; with `log`
    /// (default nil) it appends a line `GET <path>` per request to that file (the gallery benchmark
    /// counts them).
    public static func start(
        bodies: [String: Data] = [:], directories: [URL] = [], image: Data? = nil, port: Int = 0, bytesPerSecond: Int? = nil,
        log: URL? = nil
    ) async throws -> LoopbackOrigin {
        var named: [String: ByteBuffer] = [:]
        for directory in directories {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                if let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) {
                    named[name] = ByteBuffer(bytes: data)
                }
            }
        }
        for (name, data) in bodies { named[name] = ByteBuffer(bytes: data) }
        let logHandle = try log.map { url -> FileHandle in
            if !FileManager.default.fileExists(atPath: url.path) { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
            let handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
            return handle
        }
        let pause = bytesPerSecond.map { TimeAmount.nanoseconds(Int64(Double(LoopbackOriginHandler.chunk) / Double(max(1, $0)) * 1e9)) }
        let box = Box()
        let channel = try await withDeadline("the loopback origin to bind port \(port)") {
            try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    box.value.withLock { $0 }?.track(channel)
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(LoopbackOriginHandler(origin: box))
                    }
                }
                .bind(host: "127.0.0.1", port: port).get()
        }
        let origin = LoopbackOrigin(
            port: channel.localAddress?.port ?? 0, image: try image ?? FixtureImages.data("hopper.jpg"), named: named, pause: pause, log: logHandle)
        origin.listener.withLock { $0 = channel }
        box.value.withLock { $0 = origin }
        return origin
    }

    private init(port: Int, image: Data, named: [String: ByteBuffer], pause: TimeAmount?, log: FileHandle?) {
        self.port = port
        self.image = image
        self.pause = pause
        self.logFile = Locked(log)
        var state = State()
        state.named = named
        self.state = Locked(state)
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which starts with `/`).
    public func url(_ path: String) -> URL { URL(string: address(path))! }

    /// ``url(_:)`` as text.
    public func address(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Answers `path` (exactly, without a query) with `resource` from now on (rule 1).
    public func set(_ path: String, _ resource: Resource) { state.withLock { $0.resources[path] = resource } }

    /// Answers `path` with `200`, `body` as `contentType` (default `image/jpeg`) after `delay`
    /// (default nil: at once) from now on (rule 1).
    public func set(_ path: String, body: Data, contentType: String = "image/jpeg", delay: Duration? = nil) {
        set(path, Resource(headers: ["Content-Type": contentType], body: body, delay: delay))
    }

    /// Serves `body` as the name `name` from now on (rule 3).
    public func serve(_ name: String, _ body: Data) { state.withLock { $0.named[name] = ByteBuffer(bytes: body) } }

    /// Makes rule 3's bodies with `generator` (path → body, nil: none) from now on; it runs on an
    /// event loop.
    public func setGenerator(_ generator: @escaping @Sendable (_ path: String) -> Data?) { state.withLock { $0.generator = generator } }

    /// Sets the body named `name` of `/gated`, `/paced` and `/slow`: `/gated` sends it up to the first
    /// of `cuts` (default: 100 bytes) before its gate, `/paced` cuts it at `cuts` (ascending offsets).
    public func setBody(_ name: String, _ body: Data, cuts: [Int] = []) { state.withLock { $0.bodies[name] = (body, cuts) } }

    /// ``setBody(_:_:cuts:)`` with one cut.
    public func setBody(_ name: String, _ body: Data, cut: Int) { setBody(name, body, cuts: [cut]) }

    func body(_ name: String) -> (body: Data, cuts: [Int])? { state.withLock { $0.bodies[name] } }

    /// Everything it has seen so far.
    public var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Requests for `target`: a URI with a query counts that URI, a path every request for it.
    public func hits(_ target: String) -> Int {
        let snapshot = self.snapshot
        return target.contains("?") ? snapshot.hits[target, default: 0] : snapshot.pathHits[target, default: 0]
    }

    /// Answers to `path` with `status`.
    public func hits(_ path: String, status: Int) -> Int { snapshot.statuses[path]?[status] ?? 0 }

    /// Requests per path.
    public var hitsByPath: [String: Int] { snapshot.pathHits }

    /// The `Host` of the last request for `path`.
    public func host(_ path: String) -> String? { snapshot.hosts[path] }

    /// Bodies served by rule 3 (generated or named); `GET /__hits` answers it too.
    public var bodiesServed: Int { snapshot.bodiesServed }

    /// Opens a gate: responses waiting on it go on.
    public func openGate(_ name: String) {
        let waiters = state.withLock { state in
            state.openGates.insert(name)
            return state.gateWaiters.removeValue(forKey: name) ?? []
        }
        waiters.forEach { $0() }
    }

    /// Waits until `predicate` holds for the snapshot. Returns `false` if it did not within 30 s
    /// or the origin stopped (a safety net so a broken test fails instead of hanging).
    public func waitUntil(_ predicate: @escaping @Sendable (Snapshot) -> Bool) async -> Bool {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let safety = Task {
            try await Task.sleep(for: .seconds(30))
            self.resumeWaiter(id, with: false)
        }
        defer { safety.cancel() }
        return await withCheckedContinuation { continuation in
            let now: Bool? = state.withLock { state in
                if predicate(state.snapshot) { return true }
                if state.stopped { return false }
                state.waiters.append((id, predicate, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Closes the listening socket and every open connection, and wakes every waiter.
    public func stop() async {
        let (connections, waiters) = state.withLock { state in
            state.stopped = true
            defer {
                state.waiters.removeAll()
                state.connections.removeAll()
                state.gateWaiters.removeAll()
            }
            return (Array(state.connections.values), state.waiters.map(\.continuation))
        }
        waiters.forEach { $0.resume(returning: false) }
        try? await listener.withLock { $0 }?.close()
        for connection in connections { try? await connection.close() }
    }

    private func resumeWaiter(_ id: Int, with value: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume(returning: value)
    }

    /// Changes the snapshot and wakes the waiters whose predicates now hold.
    func update(_ change: (inout Snapshot) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            change(&state.snapshot)
            guard !state.waiters.isEmpty else { return [] }
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(state.snapshot) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Runs `action` when `gate` is open (at once if it already is); never once the origin stopped.
    func whenOpen(_ gate: String, _ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state in
            if state.openGates.contains(gate) { return true }
            if !state.stopped { state.gateWaiters[gate, default: []].append(action) }
            return false
        }
        if runNow { action() }
    }

    /// Appends the request's line to the log file, if any.
    func logRequest(_ path: Substring) {
        logFile.withLock { try? $0?.write(contentsOf: Data("GET \(path)\n".utf8)) }
    }

    /// Rule 3's body for `path`, counted when there is one.
    func plainBody(_ path: Substring) -> ByteBuffer? {
        if path == "/__hits" { return ByteBuffer(string: "\(bodiesServed)") }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let (generator, named) = state.withLock { ($0.generator, $0.named[name]) }
        guard let body = generator.flatMap({ $0(String(path)) }).map({ ByteBuffer(bytes: $0) }) ?? named else { return nil }
        update { $0.bodiesServed += 1 }
        return body
    }

    /// The body named `name` (rule 3's names), not counted.
    func named(_ name: String) -> Data? { state.withLock { $0.named[name] }.map { Data($0.readableBytesView) } }

    func resource(_ path: Substring) -> Resource? { state.withLock { $0.resources[String(path)] } }

    private func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let open = state.withLock { state in
            state.snapshot.connections += 1
            if !state.stopped { state.connections[id] = channel }
            return !state.stopped
        }
        guard open else { return channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in _ = self.state.withLock { $0.connections.removeValue(forKey: id) } }
    }

    /// The origin, set once it is bound (the handlers are made before).
    final class Box: Sendable {
        let value = Locked<LoopbackOrigin?>(nil)
    }
}
