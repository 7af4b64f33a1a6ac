import Foundation

/// Performs one HTTP exchange for ``ImageDownloader``: sends a request and returns the response
/// head with a stream of body chunks. Implementations must **not** follow redirects (the
/// downloader does, through its `RedirectHandler`), must not retry (beyond sending an idempotent
/// request once more when its connection failed before any response, as ``DataLoader`` does),
/// and must stop the transfer (closing or resetting the connection) when the Swift task iterating
/// the body is cancelled or stops iterating.
///
/// Osprey ships ``DataLoader`` (async-http-client, the default); tests and benchmarks may supply
/// their own.
public protocol DataLoading: Sendable {
    /// Sends `request` and returns once the response head has arrived: the head, and the body as
    /// chunks that arrive while iterating. Throws when no response arrives (connection refused, reset, …).
    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks)
}

/// A type-erased, single-pass asynchronous sequence of body chunks.
public struct DataChunks: AsyncSequence, Sendable {

    private enum Source: Sendable {
        /// The whole body, held in memory (no stream, no closure behind it).
        case whole(Data)
        case stream(@Sendable () -> AsyncIterator)
    }

    private let source: Source

    /// Wraps `base`, turning each element into `Data` with `transform`.
    public init<Base: AsyncSequence & Sendable>(_ base: Base, transform: @escaping @Sendable (Base.Element) -> Data) {
        source = .stream {
            var iterator = base.makeAsyncIterator()
            return AsyncIterator(next: {
                guard let element = try await iterator.next() else { return nil }
                return transform(element)
            })
        }
    }

    /// Wraps a sequence of `Data`.
    public init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == Data {
        self.init(base, transform: { $0 })
    }

    /// A body of one chunk (or none, for empty data). (No stream behind it: iterating it does not
    /// suspend.)
    public init(data: Data) {
        source = .whole(data)
    }

    /// The whole body when it was given at once (``init(data:)``), else `nil`.
    var wholeData: Data? {
        if case .whole(let data) = source { return data }
        return nil
    }

    /// Starts iterating. A body can be iterated once.
    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case .whole(let data): AsyncIterator(pending: data.isEmpty ? nil : data)
        case .stream(let make): make()
        }
    }

    /// The iterator of ``DataChunks``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A body given at once: its one chunk, until taken.
        private var pending: Data?
        private let nextChunk: (() async throws -> Data?)?

        init(pending: Data?) {
            self.pending = pending
            nextChunk = nil
        }

        init(next: @escaping () async throws -> Data?) {
            pending = nil
            nextChunk = next
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            guard let nextChunk else {
                defer { pending = nil }
                return pending
            }
            return try await nextChunk()
        }
    }
}

/// Loads `file:` and `data:` URLs without a network.
enum LocalURLLoader {
    static func canLoad(_ url: URL) -> Bool {
        let scheme = URLScheme.parse(url).scheme
        return scheme == .file || scheme == .data
    }

    /// Returns the data of a `file:` or `data:` URL and a synthesised `200` response.
    static func load(_ url: URL) throws(OspreyError) -> (Data, DownloadResponse) {
        if url.scheme?.lowercased() == "data" {
            let (data, mime) = try decodeDataURL(url.absoluteString)
            return (data, DownloadResponse(statusCode: 200, headers: ["Content-Type": mime, "Content-Length": "\(data.count)"], url: url))
        }
        do {
            let data = try Data(contentsOf: url)
            return (data, DownloadResponse(statusCode: 200, headers: ["Content-Length": "\(data.count)"], url: url))
        } catch {
            throw .download(.transport(url: url, message: "cannot read file \(url.path): \(error.localizedDescription)"))
        }
    }

    /// Decodes `data:[<mediatype>][;base64],<data>` (RFC 2397).
    static func decodeDataURL(_ string: String) throws(OspreyError) -> (Data, String) {
        guard string.lowercased().hasPrefix("data:"), let comma = string.firstIndex(of: ",") else {
            throw .download(.invalidURL(String(string.prefix(64))))
        }
        let header = string[string.index(string.startIndex, offsetBy: 5)..<comma]
        let payload = String(string[string.index(after: comma)...])
        var parameters = header.split(separator: ";").map { String($0) }
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let mime = parameters.first.flatMap { $0.contains("/") ? $0 : nil } ?? "text/plain"
        let data: Data?
        if isBase64 {
            data = payload.removingPercentEncoding.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
        } else {
            data = payload.removingPercentEncoding.map { Data($0.utf8) }
        }
        guard let data else { throw .download(.invalidURL(String(string.prefix(64)))) }
        return (data, mime)
    }
}
