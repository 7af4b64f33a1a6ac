import Foundation
import Testing

@_spi(Benchmarking) @testable import Osprey

/// A loader with its answers in memory: `immediateResponse` (the benchmarks' hook) answers at
/// once, `send` answers the same table. It counts both, to show that no request is sent twice.
private final class MemoryLoader: ImmediateDataLoading {
    struct Answer: Sendable {
        var status = 200
        var headers: [String: String] = ["Content-Type": "image/jpeg"]
        var body = LoadingTestData.hopperJPEG
        /// Hand the body over as a stream instead of at once.
        var streamed = false
        /// No immediate answer: `send` waits until ``MemoryLoader/release()``.
        var held = false
    }

    /// Answers by path, one per call in turn (the last repeats).
    private let answers: [String: [Answer]]
    private let calls = Locked<(immediate: [String], sent: [String])>(([], []))
    private let gate = AsyncStream<Void>.makeStream()

    init(_ answers: [String: [Answer]]) {
        self.answers = answers
    }

    var immediateCalls: [String] { calls.withLock { $0.immediate } }
    var sentCalls: [String] { calls.withLock { $0.sent } }

    /// Lets held answers go.
    func release() { gate.continuation.finish() }

    func immediateResponse(to request: DownloadRequest) -> DataLoadingResponse? {
        if answers[request.url.path]?.first?.held == true { return nil }
        let count = calls.withLock { calls in
            calls.immediate.append(request.url.path)
            return calls.immediate.count + calls.sent.count
        }
        return answer(request, call: count)
    }

    func send(_ request: DownloadRequest) async throws -> DataLoadingResponse {
        let count = calls.withLock { calls in
            calls.sent.append(request.url.path)
            return calls.immediate.count + calls.sent.count
        }
        if answers[request.url.path]?.first?.held == true {
            for await _ in gate.stream {}
        }
        guard let response = answer(request, call: count) else { throw URLError(.cannotFindHost) }
        return response
    }

    private func answer(_ request: DownloadRequest, call: Int) -> DataLoadingResponse? {
        guard let list = answers[request.url.path] else { return nil }
        let answer = list[min(call, list.count) - 1]
        let response = DownloadResponse(statusCode: answer.status, headers: answer.headers, url: request.url)
        if answer.streamed {
            let (stream, continuation) = AsyncStream<Data>.makeStream()
            continuation.yield(answer.body.prefix(100))
            continuation.yield(answer.body.dropFirst(100))
            continuation.finish()
            return DataLoadingResponse(response: response, body: DataChunks(stream))
        }
        return DataLoadingResponse(response: response, body: DataChunks(data: answer.body))
    }
}

@Suite("Downloader: loaders that answer at once", .timeLimit(.minutes(5)))
struct DownloaderImmediateTests {
    private func url(_ path: String) -> URL { URL(string: "https://images.example.com\(path)")! }

    @Test("an immediate answer completes the download before download returns, with its events, without a send")
    func completesInline() async throws {
        let loader = MemoryLoader(["/a.jpg": [.init()]])
        let downloader = makeDownloader(loader)
        let events = downloader.events()
        let result = OutcomeBox()
        var options = DownloadOptions()
        options.callbackQueue = .immediate
        downloader.download(url("/a.jpg"), options: options) { outcome in result.value.withLock { $0 = outcome } }
        let delivered = try #require(result.value.withLock { $0 })
        #expect(try delivered.get().data == LoadingTestData.hopperJPEG)
        #expect(try delivered.get().metrics.receivedBytes == LoadingTestData.hopperJPEG.count)
        #expect(loader.immediateCalls == ["/a.jpg"])
        #expect(loader.sentCalls.isEmpty)
        #expect(downloader.runningCount == 0)
        var seen: [String] = []
        for await event in events {
            switch event {
            case .willDownload: seen.append("willDownload")
            case .didReceiveResponse(let response, _): seen.append("response \(response.statusCode)")
            case .didFinish(_, let finished, _): seen.append("finished \((try? finished.get())?.statusCode ?? 0)")
            }
            if seen.count == 3 { break }
        }
        #expect(seen == ["willDownload", "response 200", "finished 200"])
    }

    @Test("an immediate redirect is followed in a task; the first request is not sent again")
    func redirect() async throws {
        let loader = MemoryLoader([
            "/old.jpg": [.init(status: 302, headers: ["Location": "/new.jpg"], body: Data())],
            "/new.jpg": [.init()]
        ])
        let downloader = makeDownloader(loader)
        let result = try await downloader.download(url("/old.jpg"))
        #expect(result.data == LoadingTestData.hopperJPEG)
        #expect(result.response.url == url("/new.jpg"))
        #expect(result.metrics.redirectCount == 1)
        #expect(loader.immediateCalls == ["/old.jpg"])
        #expect(loader.sentCalls == ["/new.jpg"])
    }

    @Test("an immediate 503 is retried by the retry strategy; without one it fails at once")
    func retry() async throws {
        let answers: [String: [MemoryLoader.Answer]] = ["/busy.jpg": [.init(status: 503, body: Data("busy".utf8)), .init()]]
        let loader = MemoryLoader(answers)
        let downloader = makeDownloader(loader) { $0.retryStrategy = DelayRetryStrategy(maxRetryCount: 2, interval: .fixed(.milliseconds(1))) }
        let result = try await downloader.download(url("/busy.jpg"))
        #expect(result.data == LoadingTestData.hopperJPEG)
        #expect(result.metrics.retryCount == 1)
        #expect(loader.immediateCalls == ["/busy.jpg"])
        #expect(loader.sentCalls == ["/busy.jpg"])

        let once = MemoryLoader(answers)
        let failing = makeDownloader(once)
        guard case .invalidStatusCode(503, _)? = await outcome(failing, url("/busy.jpg")).downloadReason else {
            Issue.record("expected invalidStatusCode(503)")
            return
        }
        #expect(once.sentCalls.isEmpty)
    }

    @Test("immediate answers are validated like sent ones: 404, a body that is not an image")
    func validation() async throws {
        let loader = MemoryLoader([
            "/missing.jpg": [.init(status: 404, body: Data("not found".utf8))],
            "/page.jpg": [.init(headers: ["Content-Type": "text/html"], body: Data("<html></html>".utf8))]
        ])
        let downloader = makeDownloader(loader)
        guard case .invalidStatusCode(404, _)? = await outcome(downloader, url("/missing.jpg")).downloadReason else {
            Issue.record("expected invalidStatusCode(404)")
            return
        }
        #expect(downloader.isOnFailedURLList(url("/missing.jpg")))
        guard case .invalidResponse? = await outcome(downloader, url("/page.jpg")).downloadReason else {
            Issue.record("expected invalidResponse")
            return
        }
        #expect(loader.sentCalls.isEmpty)
    }

    @Test("an immediate answer with a streamed body is read in a task, not sent again")
    func streamedBody() async throws {
        let loader = MemoryLoader(["/stream.jpg": [.init(streamed: true)]])
        let downloader = makeDownloader(loader)
        let result = try await downloader.download(url("/stream.jpg"))
        #expect(result.data == LoadingTestData.hopperJPEG)
        #expect(loader.immediateCalls == ["/stream.jpg"])
        #expect(loader.sentCalls.isEmpty)
    }

    @Test("a final immediate answer takes no slot and is not queued behind a running download")
    func noSlot() async throws {
        let loader = MemoryLoader(["/slow.jpg": [.init(held: true)], "/a.jpg": [.init()]])
        let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
        let slow = Task { await outcome(downloader, url("/slow.jpg")) }
        await eventually { !loader.sentCalls.isEmpty }
        #expect(downloader.runningCount == 1)
        // The only slot is taken: a download that needs the network would queue.
        #expect(try await downloader.download(url("/a.jpg")).data == LoadingTestData.hopperJPEG)
        #expect(downloader.runningCount == 1)
        #expect(downloader.queuedCount == 0)
        loader.release()
        #expect(await slow.value.value?.data == LoadingTestData.hopperJPEG)
    }

    @Test("each caller gets its own immediate answer (nothing to coalesce), with its own data modifier")
    func perCaller() async throws {
        let loader = MemoryLoader(["/a.jpg": [.init()]])
        let downloader = makeDownloader(loader)
        var modified = DownloadOptions()
        modified.responseDataModifier = ResponseDataModifier { data, _ in data.prefix(10) }
        async let plain = downloader.download(url("/a.jpg"))
        async let short = downloader.download(url("/a.jpg"), options: modified)
        #expect(try await plain.data == LoadingTestData.hopperJPEG)
        #expect(try await short.data == LoadingTestData.hopperJPEG.prefix(10))
        #expect(loader.immediateCalls == ["/a.jpg", "/a.jpg"])
        #expect(loader.sentCalls.isEmpty)
    }

    @Test("a loader without immediate answers goes through send")
    func sendOnly() async throws {
        struct SendOnly: DataLoading {
            func send(_ request: DownloadRequest) async throws -> DataLoadingResponse {
                DataLoadingResponse(response: DownloadResponse(statusCode: 200, url: request.url), body: DataChunks(data: LoadingTestData.hopperJPEG))
            }
        }
        #expect(makeDownloader(SendOnly()).immediateLoader == nil)
        #expect(try await makeDownloader(SendOnly()).download(url("/x.jpg")).data == LoadingTestData.hopperJPEG)
    }
}

/// A download's outcome, written by its completion handler.
private final class OutcomeBox: Sendable {
    let value = Locked<Result<DownloadResult, OspreyError>?>(nil)
}
