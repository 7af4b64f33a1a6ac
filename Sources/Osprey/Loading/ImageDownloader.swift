import Foundation
import Synchronization

/// Downloads image data with coalescing, prioritised scheduling, cancellation, validation,
/// retries, resumable and conditional requests (Kingfisher's `ImageDownloader` and
/// AFImageDownloader, for Linux).
///
/// The pipeline's downloads run through one; configure it (``Configuration``) and hand it to
/// ``ImagePipeline/Configuration/downloader`` or per request (``RequestOption/downloader(_:)``).
///
/// - **Coalescing.** Concurrent callers whose final requests are equal (see ``DownloadRequest``)
///   share one network task: a job of the library's one job table (`JobRegistry`), keyed by the
///   final request, with the callers as its subscribers. Each gets its own `DownloadTask`;
///   cancelling one removes only that caller (it receives
///   ``OspreyError/DownloadReason/cancelled(url:)``); the last cancel cancels the network task,
///   or removes it from the queue. A finished task is forgotten, so a later request downloads again.
/// - **Scheduling.** At most ``Configuration/maximumConcurrentDownloads`` (6) tasks run; the rest
///   queue by priority (the highest of a task's callers), then FIFO or LIFO
///   (`Configuration.executionOrder`). Each running slot is a worker (one Swift task) that runs
///   queued tasks one after another, so a burst of downloads costs a few Swift tasks, not one each.
/// - **Delivery.** Every caller is called back on its own callback queue with its own
///   ``RequestOption/responseDataModifier(_:)``.
/// - **Schemes.** `http` and `https` through the ``DataLoading`` loader; `file` and `data` URLs are
///   read locally (through the same queue, coalescing and validation); custom sources through
///   ``ImageSource/provider(_:)``.
///
/// The downloader does not own its loader: shut a ``DataLoader`` down yourself when done.
public final class ImageDownloader: Sendable {
    /// Receives a caller's result.
    package typealias Completion = @Sendable (Result<DownloadResult, OspreyError>) -> Void
    /// Receives bytes received so far and the expected total (`nil` when unknown).
    package typealias ProgressHandler = @Sendable (_ received: Int, _ expected: Int?) -> Void

    /// A downloader with the default configuration on ``DataLoader/shared``.
    public static let `default` = ImageDownloader()

    /// The settings this downloader was created with.
    public let configuration: Configuration
    /// The loader performing HTTP exchanges.
    public let loader: any DataLoading

    /// A network task as its callers share it: a job keyed by its final request.
    typealias DownloadJob = SharedJob<RequestKey, Transferred>

    /// The network tasks queued or running, with their callers as subscribers.
    let jobs = JobRegistry<RequestKey, Transferred>()
    /// The scheduler: queue, worker slots, deadlines, failed-URL list, resumable data.
    let state: Locked<State>
    /// ``Configuration/headers`` as a request holds them (fields whose names differ only in case
    /// merged), worked out once: every request starts from them.
    let defaultHeaders: [String: String]
    /// Mirrors of counts kept under the lock, read without it so the common case (nothing on the
    /// failed-URL list, no resumable data) takes no extra lock per download.
    let failedURLCount = Atomic<Int>(0)
    let resumableCount = Atomic<Int>(0)
    /// Event observers, behind their own lock: emitting an event does not contend with scheduling.
    let observers = Observers()

    /// The open event streams, by id, and their count mirrored in an atomic: emitting costs no
    /// lock while nobody observes.
    final class Observers: Sendable {
        let table = Locked<(nextID: UInt64, streams: [UInt64: AsyncStream<DownloadEvent>.Continuation])>((0, [:]))
        let count = Atomic<Int>(0)
    }

    /// A network task as the scheduler sees it; its callers are its job's subscribers.
    struct NetworkTask {
        let id: UInt64
        let request: RequestKey
        /// The redirect handler and retry strategy of the caller that created the task.
        let settings: TransferSettings
        let job: DownloadJob
        /// The worker running it; `nil` while queued.
        var worker: UInt64?
        /// The job's priority when last queued (the highest of its callers').
        var priority: DownloadPriority
    }

    struct ResumableData {
        let data: Data
        let validator: String
    }

    /// A worker's Swift task, once created.
    struct WorkerHandle {
        var task: Task<Void, Never>?
    }

    /// A worker to start, with its first network task.
    struct WorkerStart {
        let worker: UInt64
        let first: Transfer
        let priority: DownloadPriority
    }

    struct State {
        var tasks: [RequestKey: NetworkTask] = [:]
        /// The queued tasks, by priority and arrival.
        var queue: DownloadQueue
        var queued = 0
        /// Network tasks running: one per busy worker.
        var running = 0
        /// The worker tasks, by id. A worker runs network tasks one after another while the queue
        /// has any, so a burst of downloads costs a few Swift tasks, not one each. A worker's entry
        /// exists from its start to its end; its task is stored once created (see ``launch(_:)``).
        var workers: [UInt64: WorkerHandle] = [:]
        /// Workers whose Swift task was cancelled to stop the network task they run: they end after it.
        var retired: Set<UInt64> = []
        var nextWorkerID: UInt64 = 0
        /// Deadlines of the running tasks, by task id, and the task that enforces them.
        var deadlines: [UInt64: Deadline] = [:]
        var watchdog = Watchdog()
        var nextID: UInt64 = 0
        var failedURLs: Set<String> = []
        var resumable: [String: ResumableData] = [:]
        var resumableOrder: [String] = []
    }

    /// Creates a downloader. `loader` defaults to ``DataLoader/shared``.
    public init(configuration: Configuration = Configuration(), loader: any DataLoading = DataLoader.shared) {
        self.configuration = configuration
        self.loader = loader
        self.state = Locked(State(queue: DownloadQueue(executionOrder: configuration.executionOrder)))
        defaultHeaders = DownloadRequest(url: URL(fileURLWithPath: "/"), headers: configuration.headers).headers
    }

    // MARK: - Downloading

    /// Downloads `url` and calls `completion` once, on `options.callbackQueue`.
    ///
    /// - Returns: this caller's handle; cancel it to stop waiting (the network task continues while
    ///   other callers wait for it).
    @discardableResult
    package func download(
        _ url: URL, options: DownloadOptions = DownloadOptions(),
        progress: ProgressHandler? = nil,
        completion: @escaping Completion
    ) -> DownloadTask {
        let task = DownloadTask(url: url, options: options, progress: progress, completion: completion)
        start(task)
        return task
    }

    /// Downloads `url`. Cancelling the calling Swift task cancels this caller only.
    ///
    /// - Throws: ``OspreyError/download(_:)``.
    package func download(
        _ url: URL, options: DownloadOptions = DownloadOptions(),
        progress: ProgressHandler? = nil
    ) async throws -> DownloadResult {
        var options = options
        options.callbackQueue = .immediate
        // The continuation is stored before the download starts, so the completion finds it.
        let waiter = ContinuationSlot()
        let task = DownloadTask(url: url, options: options, progress: progress) { result in
            waiter.continuation.withLock { $0.take() }?.resume(with: result)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.continuation.withLock { $0 = continuation }
                start(task)
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Loads the data of a custom provider, validating it like a download (the body must be an image
    /// when ``Configuration/validatesImageData``) and applying the caller's response data modifier.
    /// Providers are neither queued nor coalesced.
    package func download(provider: any ImageDataProvider, options: DownloadOptions = DownloadOptions()) async throws -> DownloadResult {
        let url =
            URL(string: "provider:" + (provider.cacheKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            ?? URL(string: "provider:unknown")!
        let clock = ContinuousClock()
        let start = clock.now
        let data: Data
        do {
            data = try await provider.data()
        } catch let error as OspreyError {
            throw error
        } catch {
            throw OspreyError.download(.transport(url: url, message: "provider \(provider.cacheKey) failed: \(error)"))
        }
        let response = DownloadResponse(statusCode: 200, headers: ["Content-Length": "\(data.count)"], url: url)
        try validateBody(data, response: response, url: url)
        let fetched = Fetched(data: data, response: response, notModified: false)
        let metrics = DownloadMetrics(receivedBytes: data.count, duration: clock.now - start)
        return try Self.result(.success(Transferred(fetched: fetched, metrics: metrics, url: url)), modifier: options.responseDataModifier).get()
    }

    // MARK: - Cancelling and priorities

    /// Cancels every caller waiting for `url`: callers that asked for it, and callers whose
    /// modified request loads it.
    package func cancel(url: URL) {
        for job in jobs.inFlight {
            callers(of: job).filter { $0.url == url || job.key.request.url == url }.forEach { $0.cancel() }
        }
    }

    /// Cancels every caller of every queued and running download.
    package func cancelAll() {
        for job in jobs.inFlight { callers(of: job).forEach { $0.cancel() } }
    }

    /// The callers waiting for `job`.
    func callers(of job: DownloadJob) -> [DownloadTask] {
        job.waiting.compactMap { $0.owner as? DownloadTask }
    }

    /// The number of network tasks currently running (not queued); a running task whose last
    /// caller left counts until its transfer has wound down.
    package var runningCount: Int { state.withLock { $0.running } }
    /// The number of network tasks waiting in the queue.
    package var queuedCount: Int { state.withLock { $0.queued } }

    // MARK: - Failed-URL list

    /// Whether `url` is on the failed-URL list.
    package func isOnFailedURLList(_ url: URL) -> Bool {
        failedURLCount.load(ordering: .relaxed) > 0 && state.withLock { $0.failedURLs.contains(url.absoluteString) }
    }
    /// Puts `url` on the failed-URL list, e.g. when its data downloaded but could not be decoded.
    /// Does nothing when ``Configuration/remembersFailedURLs`` is `false`.
    package func addToFailedURLList(_ url: URL) {
        guard configuration.remembersFailedURLs else { return }
        state.withLock { state in updateFailedURLList(&state) { $0.insert(url.absoluteString) } }
    }
    /// Removes `url` from the failed-URL list.
    package func removeFromFailedURLList(_ url: URL) {
        state.withLock { state in updateFailedURLList(&state) { $0.remove(url.absoluteString) } }
    }
    /// Empties the failed-URL list.
    package func clearFailedURLList() {
        state.withLock { state in updateFailedURLList(&state) { $0.removeAll() } }
    }

    /// Changes the failed-URL list and its mirrored size. Called with the lock held.
    func updateFailedURLList(_ state: inout State, _ change: (inout Set<String>) -> Void) {
        change(&state.failedURLs)
        failedURLCount.store(state.failedURLs.count, ordering: .relaxed)
    }

    // MARK: - Events

    /// A stream of this downloader's events from now on. Each call returns a new stream; events are
    /// buffered without limit until read, and the stream ends when the consumer stops iterating it.
    package func events() -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream<DownloadEvent>.makeStream()
        let observers = self.observers
        let id = observers.table.withLock { table in
            table.nextID += 1
            table.streams[table.nextID] = continuation
            observers.count.store(table.streams.count, ordering: .relaxed)
            return table.nextID
        }
        // Holds the observer table, not the downloader (a weak reference to the downloader would
        // give it a side table and slow every retain of it).
        continuation.onTermination = { _ in
            observers.table.withLock { table in
                table.streams.removeValue(forKey: id)
                observers.count.store(table.streams.count, ordering: .relaxed)
            }
        }
        return stream
    }

    /// Sends `event` to the ``events()`` observers. Inlined: with no observer (the usual case) it
    /// is one relaxed load at each of its call sites on every download.
    @inline(__always)
    func emit(_ event: @autoclosure () -> DownloadEvent) {
        guard observers.count.load(ordering: .relaxed) > 0 else { return }
        send(event())
    }

    private func send(_ event: DownloadEvent) {
        let observers = self.observers.table.withLock { Array($0.streams.values) }
        for observer in observers { observer.yield(event) }
    }

    // MARK: - Helpers

    /// A caller's result of `outcome`, after its response data `modifier` (a modifier's failure
    /// names the URL of the request). Takes the modifier, not the caller's whole options: copying
    /// those retains every field, per download.
    static func result(
        _ outcome: Result<Transferred, OspreyError>, modifier: ResponseDataModifier?
    ) -> Result<DownloadResult, OspreyError> {
        outcome.flatMap { transferred in
            let fetched = transferred.fetched, metrics = transferred.metrics
            var data = fetched.data
            if !fetched.notModified, let modifier {
                guard let modified = modifier.modify(data, fetched.response) else {
                    return .failure(.download(.dataModifyingFailed(url: transferred.url)))
                }
                data = modified
            }
            return .success(DownloadResult(data: data, response: fetched.response, isNotModified: fetched.notModified, metrics: metrics))
        }
    }

    /// Whether the downloader can load `url`: `http` or `https` with a host, `file`, `data`.
    static func isSupported(_ url: URL) -> Bool {
        switch URLScheme.parse(url) {
        case (.http, let hasHost), (.https, let hasHost): hasHost
        case (.file, _), (.data, _): true
        case (.other, _): false
        }
    }

    /// Failures that will not go away by trying again: they put the URL on the failed-URL list.
    static func isPermanent(_ error: OspreyError) -> Bool {
        guard case .download(let reason) = error else { return false }
        switch reason {
        case .invalidURL, .invalidResponse, .invalidContentType: return true
        case .invalidStatusCode(let code, _): return (400..<500).contains(code) && code != 408 && code != 429
        default: return false
        }
    }

    func makeRequest(_ url: URL, options: DownloadOptions) -> DownloadRequest {
        var request = DownloadRequest(url: url, uniqueHeaders: defaultHeaders, timeout: options.timeout)
        for (name, value) in options.headers { request.setValue(value, forHTTPHeaderField: name) }
        if let credentials = options.credentials ?? configuration.credentials {
            request.setValue(credentials.authorizationHeaderValue, forHTTPHeaderField: "Authorization")
        }
        options.validator?.makeConditional(&request)
        return request
    }
}

/// Where ``ImageDownloader/download(_:options:progress:)`` keeps its continuation for the
/// download's completion.
private final class ContinuationSlot: Sendable {
    let continuation = Mutex<CheckedContinuation<DownloadResult, any Error>?>(nil)
}
