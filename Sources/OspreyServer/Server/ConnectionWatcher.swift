import Hummingbird
import NIOCore
import Osprey

/// Tells requests when their client has gone away, without reading the connection's request
/// stream, so the connection stays usable (keep-alive) for the next request.
///
/// Hummingbird's own watch (`RequestBody.consumeWithCancellationOnInboundClose`) iterates the
/// connection's inbound stream; cancelling that iteration ends the stream, so Hummingbird closes
/// the connection after every watched response. This handler sits in the channel pipeline
/// instead (after HTTP decoding, one per connection) and only observes: the client's half-close
/// (`ChannelEvent.inputClosed`, Hummingbird allows remote half-closure) or the channel going
/// inactive marks the connection closed and runs the handlers requests registered.
final class ConnectionWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    /// The connection's state, shared with the requests on it.
    let state = ConnectionState()
    private let metrics: ServerMetrics

    /// A watcher for one new connection, counted in `osprey_connections_total`.
    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        metrics.connections.increment()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { state.close() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.close()
        context.fireChannelInactive()
    }

    /// The state of `channel`'s connection, or `nil` when it has no watcher (then nothing is
    /// cancelled on a disconnect).
    static func state(of channel: (any Channel)?) async -> ConnectionState? {
        guard let channel else { return nil }
        return try? await channel.pipeline.handler(type: ConnectionWatcher.self).get().state
    }
}

/// Whether a connection is closed, and the handlers to run when it closes.
final class ConnectionState: Sendable {
    private struct State {
        var closed = false
        var nextID: UInt64 = 0
        var handlers: [UInt64: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    /// Registers `handler` to run once when the connection closes; returns its id for
    /// ``remove(_:)``, or `nil` when the connection is already closed (`handler` is not run).
    func onClose(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.nextID += 1
            state.handlers[state.nextID] = handler
            return state.nextID
        }
    }

    /// Unregisters a handler (its request is done).
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    /// Marks the connection closed and runs the registered handlers.
    func close() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.closed else { return [] }
            state.closed = true
            defer { state.handlers = [:] }
            return Array(state.handlers.values)
        }
        for handler in handlers { handler() }
    }

    /// `body`'s result, or 499 as soon as the connection closes (`body` is then cancelled, which
    /// leaves its shared job in ``ImageService``'s job table). Without a state, `body` just runs.
    static func run<T: Sendable>(
        cancellingOnClose connection: ConnectionState?,
        _ body: @escaping @Sendable () async throws(ServerError) -> T
    ) async throws(ServerError) -> T {
        guard let connection else { return try await body() }
        let gone = ServerError(status: 499, reason: "the client closed the connection before the answer was ready")
        let (closed, signal) = AsyncStream<Void>.makeStream()
        guard let id = connection.onClose({ signal.finish() }) else { throw gone }
        defer { connection.remove(id) }
        let outcome: Result<T, ServerError> = await withTaskGroup(of: Result<T, ServerError>?.self) { group in
            group.addTask {
                do throws(ServerError) { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                for await _ in closed {}
                // Cancelled: the body finished first.
                return Task.isCancelled ? nil : .failure(gone)
            }
            var first: Result<T, ServerError>?
            while let next = await group.next() {
                if let next {
                    first = next
                    break
                }
            }
            group.cancelAll()
            return first ?? .failure(gone)
        }
        return try outcome.get()
    }
}
