import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The default ``DataLoading``: HTTP and HTTPS through one async-http-client `HTTPClient`.
///
/// The loader owns its client. Call ``shutdown()`` once it is no longer used (async-http-client
/// requires it; a client dropped without shutdown traps in debug builds). ``shared`` lives for the
/// whole process and need not be shut down.
///
/// Redirects are not followed here (``ImageDownloader`` follows them); responses are not
/// decompressed. Cancelling the task that awaits ``send(_:)`` or iterates the body, or dropping
/// the body iterator, cancels the request and closes its connection.
///
/// A `GET` or `HEAD` whose connection closes, resets or answers with bytes that are not HTTP
/// before any response head arrives is sent once more (RFC 9112, section 9.3.1): a pooled
/// connection that the server closed as it was reused, or that carries the leftover bytes of a
/// response longer than its `Content-Length`, costs the request nothing. A second such failure
/// is thrown. Browsers, `URLSession` and OkHttp do the same; async-http-client does not.
public final class DataLoader: DataLoading {
    /// Connection settings of a ``DataLoader``.
    public struct Configuration: Sendable {
        /// Timeout for establishing a connection. Default 10 s.
        public var connectTimeout: Duration
        /// Maximum idle time between two reads of the body before failing. Default 30 s.
        /// The downloader's whole-download timeout (15 s by default) usually fires first.
        public var readTimeout: Duration
        /// Maximum concurrent HTTP/1.1 connections to one host. Default 8.
        public var maximumConnectionsPerHost: Int
        /// How long an idle pooled connection is kept. Default 60 s.
        public var idleTimeout: Duration
        /// Whether async-http-client keeps retrying a failed connection attempt until the connect
        /// timeout. Default `false`: a refused connection fails at once as a transport error and the
        /// downloader's ``RetryStrategy`` decides.
        public var retriesConnectionEstablishment: Bool

        /// Creates a configuration; every parameter has the default stated on its property.
        public init(
            connectTimeout: Duration = .seconds(10), readTimeout: Duration = .seconds(30),
            maximumConnectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(60),
            retriesConnectionEstablishment: Bool = false
        ) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.idleTimeout = idleTimeout
            self.retriesConnectionEstablishment = retriesConnectionEstablishment
        }
    }

    /// A process-wide loader with the default configuration, never shut down.
    public static let shared = DataLoader()

    /// The underlying client.
    public let client: HTTPClient

    /// Creates a loader with its own `HTTPClient` on NIO's singleton event loop group.
    public init(configuration: Configuration = Configuration()) {
        var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .init(configuration.idleTimeout))
        pool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        pool.retryConnectionEstablishment = configuration.retriesConnectionEstablishment
        let clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .init(configuration.connectTimeout), read: .init(configuration.readTimeout)),
            connectionPool: pool,
            decompression: .disabled
        )
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// Shuts the client down: in-flight requests fail, later ones throw. Call once.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends `request` with async-http-client; the body streams as `ByteBuffer`s turned into `Data`.
    public func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            outgoing.headers.add(name: name, value: value)
        }
        // The downloader enforces the whole-download timeout; this deadline is only a backstop.
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: .hours(24))
        } catch let error where Self.mayResend(request, after: error) {
            response = try await client.execute(outgoing, timeout: .hours(24))
        }
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        }
        let head = DownloadResponse(statusCode: Int(response.status.code), headers: headers, url: request.url)
        return (response: head, body: DataChunks(response.body) { Data($0.readableBytesView) })
    }
}

extension DataLoader {
    /// Whether `request` may be sent again after `error` ended it before any response head: an
    /// idempotent method without a body, and a connection that closed, reset or spoke something
    /// other than HTTP. Refused connections, timeouts and cancellation are not resent.
    static func mayResend(_ request: DownloadRequest, after error: any Error) -> Bool {
        guard request.method == "GET" || request.method == "HEAD" else { return false }
        switch error {
        case let error as HTTPClientError: return error == .remoteConnectionClosed
        case is HTTPParserError: return true
        case let error as ChannelError: return error == .ioOnClosedChannel || error == .eof
        case let error as IOError: return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        default: return false
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
