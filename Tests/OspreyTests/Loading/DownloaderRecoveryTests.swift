import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import Osprey

@Suite("Downloader retries, the failed-URL list, resume and conditional requests", .timeLimit(.minutes(5)))
struct DownloaderRecoveryTests {
    private let immediateRetry = RetryStrategy(maxRetryCount: 2, interval: .fixed(.zero))

    @Test("503 then 200 succeeds after one retry")
    func retry503() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.retryStrategy = immediateRetry }
            let result = await outcome(downloader, server.url("/flaky/a?fail=1&code=503"))
            let value = try #require(result.value)
            #expect(value.data == server.image)
            #expect(value.metrics.retryCount == 1)
            #expect(server.hits("/flaky/a?fail=1&code=503") == 2)
        }
    }

    @Test("429 is retried; retries stop at the maximum")
    func retryLimit() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.retryStrategy = immediateRetry }
            #expect(await outcome(downloader, server.url("/flaky/b?fail=2&code=429")).value != nil)
            #expect(server.hits("/flaky/b?fail=2&code=429") == 3)
            let exhausted = await outcome(downloader, server.url("/flaky/c?fail=5&code=500"))
            #expect(exhausted.downloadReason.map { if case .invalidStatusCode(500, _) = $0 { true } else { false } } == true)
            #expect(server.hits("/flaky/c?fail=5&code=500") == 3)
            #expect(!downloader.isOnFailedURLList(server.url("/flaky/c?fail=5&code=500")))
        }
    }

    @Test("4xx is never retried")
    func noRetryFor4xx() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.retryStrategy = immediateRetry }
            _ = await outcome(downloader, server.url("/flaky/d?fail=1&code=404"))
            #expect(server.hits("/flaky/d?fail=1&code=404") == 1)
        }
    }

    @Test("without a retry strategy nothing is retried")
    func noStrategy() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            _ = await outcome(downloader, server.url("/flaky/e?fail=1&code=503"))
            #expect(server.hits("/flaky/e?fail=1&code=503") == 1)
        }
    }

    @Test("a connection closed before any response is sent once more, without a retry strategy")
    func resendAfterHangUp() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let result = await outcome(downloader, server.url("/hangup/a?times=1"))
            let value = try #require(result.value)
            #expect(value.data == server.image)
            #expect(server.hits("/hangup/a?times=1") == 2)
            // Only once: a second failure before any response is the download's failure.
            let twice = await outcome(downloader, server.url("/hangup/b?times=5"))
            if case .transport? = twice.downloadReason {} else { Issue.record("expected a transport failure, got \(twice)") }
            #expect(server.hits("/hangup/b?times=5") == 2)
            // A connection that fails after the head is not resent by the loader.
            _ = await outcome(downloader, server.url("/drop/c"))
            #expect(server.hits("/drop/c") == 1)
            // Nor a method that is not idempotent.
            await #expect(throws: (any Error).self) {
                _ = try await loader.send(DownloadRequest(url: server.url("/hangup/d?times=1"), method: "POST"))
            }
            #expect(server.hits("/hangup/d?times=1") == 1)
        }
    }

    @Test("the loader resends after a close, a reset or bytes that are not HTTP; not after a refusal or a timeout")
    func resendClassification() {
        let get = DownloadRequest(url: URL(string: "http://127.0.0.1/x")!)
        #expect(DataLoader.mayResend(get, after: HTTPClientError.remoteConnectionClosed))
        #expect(DataLoader.mayResend(get, after: HTTPParserError.invalidConstant))
        #expect(DataLoader.mayResend(get, after: IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(DataLoader.mayResend(get, after: ChannelError.ioOnClosedChannel))
        #expect(!DataLoader.mayResend(get, after: IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(!DataLoader.mayResend(get, after: HTTPClientError.readTimeout))
        #expect(!DataLoader.mayResend(get, after: HTTPClientError.cancelled))
        #expect(!DataLoader.mayResend(get, after: CancellationError()))
        #expect(!DataLoader.mayResend(DownloadRequest(url: get.url, method: "POST"), after: HTTPClientError.remoteConnectionClosed))
    }

    @Test("a transport failure is retried and resumes from the kept prefix")
    func retryResumes() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.retryStrategy = immediateRetry }
            let result = await outcome(downloader, server.url("/resumable/retry"))
            let value = try #require(result.value)
            #expect(value.data == server.image)
            #expect(value.metrics.resumed)
            #expect(value.metrics.retryCount == 1)
            #expect(server.snapshot.headers["/resumable/retry"]?["range"] == "bytes=\(server.image.count / 2)-")
        }
    }

    @Test("permanent failures go on the failed-URL list until retryFailed or removal")
    func failedURLList() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/status/404")
            _ = await outcome(downloader, url)
            #expect(downloader.isOnFailedURLList(url))
            #expect(await outcome(downloader, url).downloadReason == .previouslyFailed(url: url))
            #expect(server.hits("/status/404") == 1)
            _ = await outcome(downloader, url, DownloadOptions(retryFailed: true))
            #expect(server.hits("/status/404") == 2)
            downloader.removeFromFailedURLList(url)
            #expect(!downloader.isOnFailedURLList(url))
            _ = await outcome(downloader, url)
            #expect(server.hits("/status/404") == 3)

            let html = server.url("/html/bl")
            _ = await outcome(downloader, html)
            #expect(downloader.isOnFailedURLList(html))
            let undecodable = server.url("/image/undecodable")
            downloader.addToFailedURLList(undecodable)
            #expect(await outcome(downloader, undecodable).downloadReason == .previouslyFailed(url: undecodable))
            downloader.clearFailedURLList()
            #expect(!downloader.isOnFailedURLList(html))

            let invalid = URL(string: "ftp://example.com/a.jpg")!
            #expect(await outcome(downloader, invalid).downloadReason == .invalidURL(invalid.absoluteString))
            #expect(await outcome(downloader, invalid).downloadReason == .previouslyFailed(url: invalid))
        }
    }

    @Test("transient failures are not put on the failed-URL list; a success clears a retried URL")
    func transientNotListed() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let flaky = server.url("/flaky/f?fail=1&code=503")
            _ = await outcome(downloader, flaky)
            #expect(!downloader.isOnFailedURLList(flaky))
            #expect(await outcome(downloader, flaky).value != nil)

            let flaky404 = server.url("/flaky/g?fail=1&code=404")
            _ = await outcome(downloader, flaky404)
            #expect(downloader.isOnFailedURLList(flaky404))
            #expect(await outcome(downloader, flaky404, DownloadOptions(retryFailed: true)).value != nil)
            #expect(!downloader.isOnFailedURLList(flaky404))
        }
    }

    @Test("the failed-URL list can be turned off")
    func failedURLListOff() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.remembersFailedURLs = false }
            let url = server.url("/status/410")
            _ = await outcome(downloader, url)
            _ = await outcome(downloader, url)
            #expect(server.hits("/status/410") == 2)
        }
    }

    @Test("a dropped download resumes with Range and If-Range and uses the prefix on 206")
    func resume206() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/resumable/r")
            let first = await outcome(downloader, url)
            guard case .transport? = first.downloadReason else {
                Issue.record("expected transport failure, got \(first)")
                return
            }
            #expect(downloader.hasResumableData(for: url))
            let second = try #require(await outcome(downloader, url).value)
            #expect(second.data == server.image)
            #expect(second.response.statusCode == 206)
            #expect(second.metrics.resumed)
            #expect(second.metrics.receivedBytes == server.image.count - server.image.count / 2)
            let headers = server.snapshot.headers["/resumable/r"] ?? [:]
            #expect(headers["range"] == "bytes=\(server.image.count / 2)-")
            #expect(headers["if-range"] == "\"v1\"")
            #expect(!downloader.hasResumableData(for: url))
        }
    }

    @Test("a cancelled download keeps its partial data and the next request resumes it")
    func cancelledResumes() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gatedresumable/never/c")
            let events = downloader.events()
            let received = Collector<Int>()
            let task = downloader.download(
                url, options: DownloadOptions(callbackQueue: .immediate),
                progress: { bytes, _ in received.append(bytes) }
            ) { _ in }
            _ = await received.wait(for: 1)
            task.cancel()
            // The network task ends (and keeps its data) after the caller was told.
            for await event in events {
                if case .didFinish(_, .failure(let error), _) = event {
                    #expect(error == .download(.cancelled(url: url)))
                    break
                }
            }
            #expect(downloader.hasResumableData(for: url))
            let resumed = try #require(await outcome(downloader, url).value)
            #expect(resumed.data == server.image)
            #expect(resumed.metrics.resumed)
            #expect(server.snapshot.headers["/gatedresumable/never/c"]?["range"] == "bytes=100-")
        }
    }

    @Test("the retry strategy sees the server's Retry-After")
    func retryAfterPassed() async throws {
        try await withLoopback { server, loader in
            let recorder = Collector<RetryContext>()
            let downloader = makeDownloader(loader) { $0.retryStrategy = RecordingStrategy(recorder: recorder) }
            #expect(await outcome(downloader, server.url("/flaky/ra?fail=1&code=503")).value != nil)
            let contexts = recorder.values
            #expect(contexts.count == 1)
            #expect(contexts.first?.retryAfter == .zero)
            #expect(contexts.first?.retryCount == 0)
        }
    }

    @Test("partial data is not kept without Accept-Ranges and a validator, nor when disabled")
    func noResumeWithoutSupport() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            _ = await outcome(downloader, server.url("/drop/n"))
            #expect(!downloader.hasResumableData(for: server.url("/drop/n")))
            let disabled = makeDownloader(loader) { $0.allowsResumableDownloads = false }
            _ = await outcome(disabled, server.url("/resumable/off"))
            #expect(!disabled.hasResumableData(for: server.url("/resumable/off")))
            #expect(await outcome(disabled, server.url("/resumable/off")).value?.response.statusCode == 200)
            #expect(server.snapshot.headers["/resumable/off"]?["range"] == nil)
        }
    }

    @Test("a validator makes the request conditional; 304 is reported as not modified")
    func notModified() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/conditional/a")
            let fresh = try #require(await outcome(downloader, url).value)
            #expect(!fresh.isNotModified)
            let validator = try #require(fresh.response.validator)
            #expect(validator.etag == "\"v1\"")

            let options = DownloadOptions(validator: validator, responseDataModifier: ResponseDataModifier { _, _ in nil })
            let cached = try #require(await outcome(downloader, url, options).value)
            #expect(cached.isNotModified)
            #expect(cached.data.isEmpty)
            #expect(cached.response.statusCode == 304)
            #expect(server.snapshot.headers["/conditional/a"]?["if-none-match"] == "\"v1\"")

            let stale = DownloadOptions(validator: CacheValidator(etag: "\"v0\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
            let changed = try #require(await outcome(downloader, url, stale).value)
            #expect(!changed.isNotModified)
            #expect(changed.data == server.image)
            #expect(server.snapshot.headers["/conditional/a"]?["if-modified-since"] == "Wed, 21 Oct 2015 07:28:00 GMT")
        }
    }
}

private struct RecordingStrategy: RetryDeciding {
    let recorder: Collector<RetryContext>

    func retryDelay(for context: RetryContext) -> Duration? {
        recorder.append(context)
        return context.retryCount < 1 ? .zero : nil
    }
}
