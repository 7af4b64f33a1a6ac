import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``DataLoading`` on `URLSession` (FoundationNetworking on Linux, libcurl underneath): an
/// alternative to ``DataLoader`` where async-http-client is unwanted.
///
/// Redirects are refused at the session level so that ``ImageDownloader`` can apply its own
/// redirect handler and limit; the body streams through a session delegate. Call ``invalidate()``
/// when done: a session keeps a strong reference to its delegate until invalidated.
public final class URLSessionDataLoader: DataLoading {
    /// The session; its delegate belongs to the loader.
    public let session: URLSession
    private let delegate: URLSessionStreamingDelegate

    /// Creates a loader with a session on `configuration`. Default: an ephemeral configuration
    /// (no cookies or cache on disk; Osprey has its own cache).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let delegate = URLSessionStreamingDelegate()
        self.delegate = delegate
        let configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// Cancels outstanding tasks and invalidates the session.
    public func invalidate() {
        session.invalidateAndCancel()
    }

    /// Sends `request` as a `URLSessionDataTask`; cancelling the calling task cancels the data task.
    public func send(_ request: DownloadRequest) async throws -> DataLoadingResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // The downloader enforces the whole-download timeout; this is only a backstop.
        urlRequest.timeoutInterval = 24 * 3600
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, url: request.url, continuation: continuation)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// Turns URLSession delegate callbacks into a response head and an `AsyncThrowingStream` body.
final class URLSessionStreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending {
        let url: URL
        var head: CheckedContinuation<DataLoadingResponse, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
    }

    private let pending = Locked<[Int: Pending]>([:])

    func register(_ task: URLSessionDataTask, url: URL, continuation: CheckedContinuation<DataLoadingResponse, any Error>) {
        pending.withLock { $0[task.taskIdentifier] = Pending(url: url, head: continuation) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.onTermination = { termination in
            if case .cancelled = termination { dataTask.cancel() }
        }
        let head = pending.withLock { pending -> (CheckedContinuation<DataLoadingResponse, any Error>, URL)? in
            guard var entry = pending[dataTask.taskIdentifier], let head = entry.head else { return nil }
            entry.head = nil
            entry.body = continuation
            pending[dataTask.taskIdentifier] = entry
            return (head, entry.url)
        }
        completionHandler(.allow)
        guard let (head, url) = head else { return }
        var headers: [String: String] = [:]
        var status = 200
        if let http = response as? HTTPURLResponse {
            status = http.statusCode
            for (name, value) in http.allHeaderFields {
                headers[String(describing: name)] = String(describing: value)
            }
        }
        let metadata = DownloadResponse(statusCode: status, headers: headers, url: response.url ?? url)
        head.resume(returning: DataLoadingResponse(response: metadata, body: DataChunks(stream)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = pending.withLock { $0[dataTask.taskIdentifier]?.body }
        body?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let head = entry.head {
            head.resume(throwing: error ?? URLError(.badServerResponse))
        } else if let error {
            entry.body?.finish(throwing: error)
        } else {
            entry.body?.finish()
        }
    }
}
