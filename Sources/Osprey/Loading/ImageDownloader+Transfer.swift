import Foundation
import NIOCore
import Synchronization

extension ImageDownloader {
    /// What became of a transfer tried on the calling thread (``finishImmediately(_:worker:)``).
    enum ImmediateStep {
        /// It finished; the worker goes on with this queued transfer, if any.
        case next(Transfer?)
        /// It needs waiting: a Swift task runs it.
        case wait(Transfer)
    }

    /// Runs `job` on the calling thread and finishes it when it can finish at once (`file:` and
    /// `data:` URLs); otherwise arms its deadline for the task that will run it.
    func finishImmediately(_ job: Transfer, worker: UInt64) -> ImmediateStep {
        let url = job.request.request.url
        guard LocalURLLoader.canLoad(url) else {
            // Only a transfer that waits needs its deadline watched.
            state.withLock { armTimeout(&$0, id: job.id, request: job.request) }
            return .wait(job)
        }
        let clock = ContinuousClock()
        let start = clock.now
        var metrics = DownloadMetrics()
        let outcome = Result { () throws(OspreyError) in
            let (data, response) = try LocalURLLoader.load(url)
            metrics.receivedBytes = data.count
            try validateBody(data, response: response, url: url)
            return Fetched(data: data, response: response, notModified: false)
        }
        metrics.duration = clock.now - start
        return .next(finish(id: job.id, request: job.request, outcome: outcome, metrics: metrics, worker: worker))
    }

    /// Runs `job` on `worker` in the worker's Swift task under its timeout, then finishes it;
    /// returns the worker's next transfer, if any.
    ///
    /// The downloader's watchdog stops a task whose deadline passes; the transfer sees the
    /// cancellation, keeps resumable data and returns, and the cancelled outcome is reported as
    /// ``OspreyError/DownloadReason/timeout(url:seconds:)``.
    func run(_ job: Transfer, worker: UInt64) async -> Transfer? {
        let id = job.id, request = job.request.request, settings = job.settings
        let clock = ContinuousClock()
        let start = clock.now
        var metrics = DownloadMetrics()
        let outcome = await transfer(job.job, request: request, settings: settings, metrics: &metrics)
        metrics.duration = clock.now - start
        return finish(id: id, request: job.request, outcome: outcome, metrics: metrics, worker: worker)
    }

    /// Loads `request`, retrying retriable failures as the retry strategy says.
    func transfer(
        _ job: DownloadJob, request: DownloadRequest, settings: TransferSettings, metrics: inout DownloadMetrics
    ) async -> Result<Fetched, OspreyError> {
        var retryCount = 0
        while true {
            let error: OspreyError
            do {
                return .success(
                    try await attempt(job, request: request, redirectHandler: settings.redirectHandler, metrics: &metrics))
            } catch let caught as OspreyError {
                error = caught
            } catch {
                return .failure(.download(.transport(url: request.url, message: "\(error)")))
            }
            if Task.isCancelled { return .failure(.download(.cancelled(url: request.url))) }
            guard
                let delay = RetryContext.delayBeforeRetry(
                    after: error, request: request, retryCount: retryCount, strategy: settings.retryStrategy)
            else { return .failure(error) }
            do {
                try await Task.sleep(for: delay)
            } catch {
                return .failure(.download(.cancelled(url: request.url)))
            }
            retryCount += 1
            metrics.retryCount = retryCount
        }
    }

    /// Whether `status` is a redirect the downloader follows (no array per check).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// One attempt: follows redirects, validates the response and streams the body.
    func attempt(
        _ job: DownloadJob, request original: DownloadRequest, redirectHandler: RedirectHandler,
        metrics: inout DownloadMetrics
    ) async throws -> Fetched {
        let resumeKey = original.url.absoluteString
        var request = original
        let resume =
            configuration.allowsResumableDownloads && resumableCount.load(ordering: .relaxed) > 0
            ? state.withLock { $0.resumable[resumeKey] } : nil
        if let resume {
            request.setValue("bytes=\(resume.data.count)-", forHTTPHeaderField: "Range")
            request.setValue(resume.validator, forHTTPHeaderField: "If-Range")
        }

        var redirects = 0
        var loaded: (response: DownloadResponse, body: DataChunks)
        while true {
            emit(.willDownload(request))
            do {
                loaded = try await loader.send(request)
            } catch {
                if Task.isCancelled { throw OspreyError.download(.cancelled(url: original.url)) }
                throw OspreyError.download(.transport(url: original.url, message: Self.describe(error)))
            }
            loaded.response.url = request.url
            let status = loaded.response.statusCode
            guard Self.isRedirect(status),
                let location = loaded.response.value(forHTTPHeaderField: "Location"),
                let next = URL(string: location, relativeTo: request.url)?.absoluteURL
            else { break }
            if redirects >= configuration.maximumRedirects {
                throw OspreyError.download(.tooManyRedirects(url: original.url, limit: configuration.maximumRedirects))
            }
            var proposed = request
            proposed.url = next
            if status == 303 { proposed.method = "GET" }
            if next.host != request.url.host || next.port != request.url.port {
                proposed.setValue(nil, forHTTPHeaderField: "Authorization")
            }
            guard let accepted = await redirectHandler.handle(proposed, loaded.response) else { break }
            redirects += 1
            metrics.redirectCount += 1
            request = accepted
        }

        let response = loaded.response
        emit(.didReceiveResponse(response, request: request))
        if response.statusCode == 304 {
            return Fetched(data: Data(), response: response, notModified: true)
        }
        var data = Data()
        if let resume {
            if response.statusCode == 206, Self.contentRangeStart(response) == resume.data.count {
                data = resume.data
                metrics.resumed = true
            } else {
                removeResumable(resumeKey)
            }
        }
        let resumed = !data.isEmpty
        let expected = try checkHead(response, url: original.url, resumed: data.count)
        do {
            for try await chunk in loaded.body {
                try receive(chunk, into: &data, url: original.url, expected: expected, metrics: &metrics)
                reportChunk(job, body: data, expected: expected)
            }
        } catch let error as OspreyError {
            throw error
        } catch {
            keepResumable(resumeKey, data: data, response: response, resumed: resumed)
            if Task.isCancelled { throw OspreyError.download(.cancelled(url: original.url)) }
            throw OspreyError.download(.transport(url: original.url, message: Self.describe(error)))
        }
        if Task.isCancelled {
            keepResumable(resumeKey, data: data, response: response, resumed: resumed)
            throw OspreyError.download(.cancelled(url: original.url))
        }
        if resume != nil { removeResumable(resumeKey) }
        try validateBody(data, response: response, url: original.url)
        return Fetched(data: data, response: response, notModified: false)
    }

    /// Checks a final response head (after redirects) before its body: a `206` only when it
    /// continues `resumed` bytes of resumable data, an acceptable status and content type, an
    /// announced length within the size limit. Returns the expected length of the whole body.
    func checkHead(_ response: DownloadResponse, url: URL, resumed: Int) throws(OspreyError) -> Int? {
        if response.statusCode == 206 && resumed == 0 {
            throw .download(.invalidResponse(url: url, reason: "unexpected 206 Partial Content"))
        }
        guard resumed > 0 || configuration.acceptableStatusCodes.contains(response.statusCode) else {
            throw .download(.invalidStatusCode(response.statusCode, response: response))
        }
        if let acceptable = configuration.acceptableContentTypes, !Self.matches(response.mimeType, acceptable) {
            throw .download(.invalidContentType(response.value(forHTTPHeaderField: "Content-Type"), response: response))
        }
        let expected = response.expectedContentLength.map { $0 + resumed }
        if let expected, expected > configuration.maximumResponseSize {
            throw .download(.responseTooLarge(url: url, limit: configuration.maximumResponseSize, received: 0))
        }
        return expected
    }

    /// Appends a chunk of the body from `url` to `data`, within the size limit.
    func receive(
        _ chunk: Data, into data: inout Data, url: URL, expected: Int?, metrics: inout DownloadMetrics
    ) throws(OspreyError) {
        // The first chunk is kept as it is (no copy) when it starts at index 0 and is the whole
        // body; otherwise the announced length (within the size limit) is reserved up front, so a
        // body of many chunks is not copied again each time the buffer grows.
        if data.isEmpty && chunk.startIndex == 0 && chunk.count >= (expected ?? 0) {
            data = chunk
        } else {
            if data.isEmpty, let expected { data.reserveCapacity(min(expected, configuration.maximumResponseSize)) }
            data.append(chunk)
        }
        metrics.receivedBytes += chunk.count
        let limit = configuration.maximumResponseSize
        if data.count > limit {
            throw .download(.responseTooLarge(url: url, limit: limit, received: data.count))
        }
    }

    /// Rejects a body that is not an image when ``Configuration/validatesImageData``.
    func validateBody(_ data: Data, response: DownloadResponse, url: URL) throws(OspreyError) {
        guard configuration.validatesImageData, ImageFormat(sniffing: data) == nil else { return }
        let leading = data.prefix(8).withUnsafeBytes { Hex.lowercase($0) }
        let type = response.value(forHTTPHeaderField: "Content-Type") ?? "no content type"
        throw .download(
            .invalidResponse(
                url: url, reason: "the body is not an image (\(type), \(data.count) bytes, leading bytes \(leading.isEmpty ? "none" : leading))"))
    }

    /// Stores partial data when the server allows resuming it (Nuke's rules).
    private func keepResumable(_ key: String, data: Data, response: DownloadResponse, resumed: Bool) {
        guard configuration.allowsResumableDownloads, !data.isEmpty,
            response.statusCode == 200 || resumed,
            response.value(forHTTPHeaderField: "Accept-Ranges")?.lowercased().contains("bytes") == true,
            let validator = response.value(forHTTPHeaderField: "ETag") ?? response.value(forHTTPHeaderField: "Last-Modified")
        else { return }
        let capacity = max(0, configuration.maximumResumableEntries)
        state.withLock { state in
            state.resumableOrder.removeAll { $0 == key }
            state.resumable[key] = ResumableData(data: data, validator: validator)
            state.resumableOrder.append(key)
            while state.resumableOrder.count > capacity {
                state.resumable[state.resumableOrder.removeFirst()] = nil
            }
            resumableCount.store(state.resumable.count, ordering: .relaxed)
        }
    }

    private func removeResumable(_ key: String) {
        state.withLock { state in
            state.resumable[key] = nil
            state.resumableOrder.removeAll { $0 == key }
            resumableCount.store(state.resumable.count, ordering: .relaxed)
        }
    }

    /// Whether partial data of `url` is kept for resuming.
    package func hasResumableData(for url: URL) -> Bool {
        resumableCount.load(ordering: .relaxed) > 0 && state.withLock { $0.resumable[url.absoluteString] != nil }
    }

    static func contentRangeStart(_ response: DownloadResponse) -> Int? {
        // "bytes 100-199/200"
        guard let value = response.value(forHTTPHeaderField: "Content-Range")?.lowercased(),
            value.hasPrefix("bytes ")
        else { return nil }
        return Int(value.dropFirst(6).prefix { $0.isNumber })
    }

    static func matches(_ mime: String?, _ acceptable: Set<String>) -> Bool {
        guard let mime else { return false }
        return acceptable.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern == "*/*" || pattern == mime { return true }
            if pattern.hasSuffix("/*") { return mime.hasPrefix(pattern.dropLast()) }
            return false
        }
    }

    /// The text of a transport failure: for a failed system call (NIO's `IOError`), what the
    /// system said and its errno, e.g. "Connection refused (errno 111)"; else the error's own text.
    static func describe(_ error: any Error) -> String {
        // Why: NIO's own text for a refused connect reads "connection reset (error set):
        // Connection refused) (errno: 111)": a reset that did not happen, and a stray parenthesis.
        if let failure = error as? IOError {
            return "\(String(cString: strerror(failure.errnoCode))) (errno \(failure.errnoCode))"
        }
        let text = String(describing: error)
        return text.isEmpty ? "\(type(of: error))" : text
    }
}
