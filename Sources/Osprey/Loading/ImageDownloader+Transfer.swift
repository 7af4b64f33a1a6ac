import Foundation
import Synchronization

/// The body and metadata of a finished network task, before per-caller data modifiers.
struct Fetched: Sendable {
    var data: Data
    var response: DownloadResponse
    var notModified: Bool
}

/// A network task as a worker runs it.
struct Transfer: Sendable {
    let id: UInt64
    let request: RequestKey
    let settings: TransferSettings
}

/// The per-task choices a caller may override: how redirects and retries are handled.
struct TransferSettings: Sendable {
    var redirectHandler: RedirectHandler
    var retryStrategy: (any RetryStrategy)?
}

extension ImageDownloader {
    /// Runs `job` on `worker` under its timeout, then finishes it; returns the worker's next
    /// transfer, if any.
    ///
    /// The downloader's watchdog stops a task whose deadline passes; the transfer sees the
    /// cancellation, keeps resumable data and returns, and the cancelled outcome is reported as
    /// ``OspreyError/DownloadReason/timeout(url:seconds:)``.
    func run(_ job: Transfer, worker: UInt64) async -> Transfer? {
        let id = job.id, request = job.request.request, settings = job.settings
        let clock = ContinuousClock()
        let start = clock.now
        var metrics = DownloadMetrics()
        let outcome = await transfer(id: id, request: request, settings: settings, metrics: &metrics)
        metrics.duration = clock.now - start
        return finish(id: id, request: job.request, outcome: outcome, metrics: metrics, worker: worker)
    }

    /// Loads `request`, retrying retriable failures as the retry strategy says.
    func transfer(id: UInt64, request: DownloadRequest, settings: TransferSettings, metrics: inout DownloadMetrics) async -> Result<Fetched, OspreyError> {
        if LocalURLLoader.canLoad(request.url) {
            do {
                let (data, response) = try LocalURLLoader.load(request.url)
                metrics.receivedBytes = data.count
                try validateBody(data, response: response, url: request.url)
                return .success(Fetched(data: data, response: response, notModified: false))
            } catch {
                return .failure(error)
            }
        }
        var retryCount = 0
        while true {
            let error: OspreyError
            do {
                return .success(try await attempt(id: id, request: request, redirectHandler: settings.redirectHandler, metrics: &metrics))
            } catch let caught as OspreyError {
                error = caught
            } catch {
                return .failure(.download(.transport(url: request.url, message: "\(error)")))
            }
            if Task.isCancelled { return .failure(.download(.cancelled(token: nil))) }
            guard let strategy = settings.retryStrategy, let retryAfter = Self.retriability(of: error) else {
                return .failure(error)
            }
            let context = RetryContext(request: request, error: error, retryCount: retryCount, retryAfter: retryAfter)
            guard let delay = strategy.retryDelay(for: context) else { return .failure(error) }
            do {
                try await Task.sleep(for: max(delay, retryAfter ?? .zero))
            } catch {
                return .failure(.download(.cancelled(token: nil)))
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

    /// `nil` when `error` must not be retried; otherwise `.some` of the server's `Retry-After`.
    static func retriability(of error: OspreyError) -> Duration?? {
        guard case .download(let reason) = error else { return nil }
        switch reason {
        case .transport:
            return .some(nil)
        case .invalidStatusCode(let code, let response) where code == 429 || (500..<600).contains(code):
            return .some(RetryAfter.parse(response.value(forHTTPHeaderField: "Retry-After")))
        default:
            return nil
        }
    }

    /// One attempt: follows redirects, validates the response and streams the body.
    func attempt(id: UInt64, request original: DownloadRequest, redirectHandler: RedirectHandler, metrics: inout DownloadMetrics) async throws -> Fetched {
        let limit = configuration.maximumResponseSize
        let resumeKey = original.url.absoluteString
        var request = original
        let resume = configuration.allowsResumableDownloads && resumableCount.load(ordering: .relaxed) > 0
            ? state.withLock { $0.resumable[resumeKey] } : nil
        if let resume {
            request.setValue("bytes=\(resume.data.count)-", forHTTPHeaderField: "Range")
            request.setValue(resume.validator, forHTTPHeaderField: "If-Range")
        }

        var redirects = 0
        var loaded: DataLoadingResponse
        while true {
            emit(.willDownload(request))
            do {
                loaded = try await loader.send(request)
            } catch {
                if Task.isCancelled { throw OspreyError.download(.cancelled(token: nil)) }
                throw OspreyError.download(.transport(url: original.url, message: Self.describe(error)))
            }
            loaded.response.url = request.url
            let status = loaded.response.statusCode
            guard Self.isRedirect(status),
                  let location = loaded.response.value(forHTTPHeaderField: "Location"),
                  let next = URL(string: location, relativeTo: request.url)?.absoluteURL else { break }
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
        if response.statusCode == 206 && !resumed {
            throw OspreyError.download(.invalidResponse(url: original.url, reason: "unexpected 206 Partial Content"))
        }
        guard resumed || configuration.acceptableStatusCodes.contains(response.statusCode) else {
            throw OspreyError.download(.invalidStatusCode(response.statusCode, response: response))
        }
        if let acceptable = configuration.acceptableContentTypes, !Self.matches(response.mimeType, acceptable) {
            throw OspreyError.download(.invalidContentType(response.value(forHTTPHeaderField: "Content-Type"), response: response))
        }
        let expected = response.expectedContentLength.map { $0 + data.count }
        if let expected, expected > limit {
            throw OspreyError.download(.responseTooLarge(url: original.url, limit: limit, received: 0))
        }
        do {
            for try await chunk in loaded.body {
                // The first chunk is kept as it is (no copy) when it starts at index 0.
                if data.isEmpty && chunk.startIndex == 0 { data = chunk } else { data.append(chunk) }
                metrics.receivedBytes += chunk.count
                if data.count > limit {
                    throw OspreyError.download(.responseTooLarge(url: original.url, limit: limit, received: data.count))
                }
                reportProgress(id: id, request: original, received: data.count, expected: expected)
            }
        } catch let error as OspreyError {
            throw error
        } catch {
            keepResumable(resumeKey, data: data, response: response, resumed: resumed)
            if Task.isCancelled { throw OspreyError.download(.cancelled(token: nil)) }
            throw OspreyError.download(.transport(url: original.url, message: Self.describe(error)))
        }
        if Task.isCancelled {
            keepResumable(resumeKey, data: data, response: response, resumed: resumed)
            throw OspreyError.download(.cancelled(token: nil))
        }
        if resume != nil { removeResumable(resumeKey) }
        try validateBody(data, response: response, url: original.url)
        return Fetched(data: data, response: response, notModified: false)
    }

    /// Rejects a body that is not an image when ``Configuration/validatesImageData``.
    func validateBody(_ data: Data, response: DownloadResponse, url: URL) throws(OspreyError) {
        guard configuration.validatesImageData, ImageFormat(sniffing: data) == nil else { return }
        let leading = data.prefix(8).map { String(format: "%02x", $0) }.joined()
        let type = response.value(forHTTPHeaderField: "Content-Type") ?? "no content type"
        throw .download(.invalidResponse(url: url, reason: "the body is not an image (\(type), \(data.count) bytes, leading bytes \(leading.isEmpty ? "none" : leading))"))
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
    public func hasResumableData(for url: URL) -> Bool {
        resumableCount.load(ordering: .relaxed) > 0 && state.withLock { $0.resumable[url.absoluteString] != nil }
    }

    static func contentRangeStart(_ response: DownloadResponse) -> Int? {
        // "bytes 100-199/200"
        guard let value = response.value(forHTTPHeaderField: "Content-Range")?.lowercased(),
              value.hasPrefix("bytes ") else { return nil }
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

    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        return text.isEmpty ? "\(type(of: error))" : text
    }
}
