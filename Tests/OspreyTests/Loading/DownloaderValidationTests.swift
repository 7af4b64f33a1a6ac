import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Downloader requests and validation", .timeLimit(.minutes(5)))
struct DownloaderValidationTests {
    @Test("default headers: Accept and a User-Agent naming Osprey and its version")
    func defaultHeaders() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            #expect(await outcome(downloader, server.url("/image/headers")).value != nil)
            let headers = server.snapshot.headers["/image/headers"] ?? [:]
            #expect(headers["accept"] == "image/*,*/*;q=0.8")
            #expect(headers["user-agent"] == "Osprey/\(ospreyVersion) (Linux)")
        }
    }

    @Test("configured default headers and per-request headers are sent")
    func configuredHeaders() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.setHeader("Custom/1", for: "user-agent") }
            let options = DownloadOptions(headers: ["X-Extra": "yes"])
            #expect(await outcome(downloader, server.url("/image/custom"), options).value != nil)
            let headers = server.snapshot.headers["/image/custom"] ?? [:]
            #expect(headers["user-agent"] == "Custom/1")
            #expect(headers["x-extra"] == "yes")
        }
    }

    @Test("sync and async request modifiers edit the request")
    func modifiers() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) {
                $0.requestModifier = .sync { request in
                    var request = request
                    request.setValue("global", forHTTPHeaderField: "X-Global")
                    return request
                }
            }
            var options = DownloadOptions()
            options.requestModifier = .sync { request in
                var request = request
                request.setValue("sync", forHTTPHeaderField: "X-Mod")
                return request
            }
            #expect(await outcome(downloader, server.url("/image/sync"), options).value != nil)
            #expect(server.snapshot.headers["/image/sync"]?["x-mod"] == "sync")
            #expect(server.snapshot.headers["/image/sync"]?["x-global"] == "global")

            options.requestModifier = .async { request in
                await Task.yield()
                var request = request
                request.url = server.url("/image/redirected-by-modifier")
                request.setValue("async", forHTTPHeaderField: "X-Mod")
                return request
            }
            let result = await outcome(downloader, server.url("/image/async"), options)
            #expect(result.value?.response.url == server.url("/image/redirected-by-modifier"))
            #expect(server.snapshot.headers["/image/redirected-by-modifier"]?["x-mod"] == "async")
            #expect(server.hits("/image/async") == 0)
            // A data modifier's failure names the request the modifiers made.
            options.responseDataModifier = ResponseDataModifier { _, _ in nil }
            let refused = await outcome(downloader, server.url("/image/async"), options)
            #expect(refused.downloadReason == .dataModifyingFailed(url: server.url("/image/redirected-by-modifier")))
        }
    }

    @Test("a modifier producing an unsupported URL fails with invalidURL")
    func modifierUnsupportedURL() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let modifier = RequestModifier.sync { request in
                var request = request
                request.url = URL(string: "ftp://127.0.0.1/x.jpg")!
                return request
            }
            let result = await outcome(downloader, server.url("/image/ftp"), DownloadOptions(requestModifier: modifier))
            #expect(result.downloadReason == .invalidURL("ftp://127.0.0.1/x.jpg"))
            #expect(server.hits("/image/ftp") == 0)
        }
    }

    @Test("a modifier returning nil fails with emptyRequest and sends nothing")
    func nilModifier() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/image/nil")
            for modifier in [RequestModifier.sync { _ in nil }, .async { _ in nil }] {
                let result = await outcome(downloader, url, DownloadOptions(requestModifier: modifier))
                #expect(result.downloadReason == .emptyRequest(url: url))
            }
            let results = Collector<DownloadOutcome>()
            downloader.download(url, options: DownloadOptions(requestModifier: .sync { _ in nil })) { results.append($0) }
            #expect(await results.wait(for: 1).first?.downloadReason == .emptyRequest(url: url))
            #expect(server.hits("/image/nil") == 0)
        }
    }

    @Test("404 fails with the status code and the response")
    func notFound() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let result = await outcome(downloader, server.url("/status/404"))
            guard case .invalidStatusCode(let code, let response)? = result.downloadReason else {
                Issue.record("expected invalidStatusCode, got \(result)")
                return
            }
            #expect(code == 404)
            #expect(response.statusCode == 404)
            #expect(response.url == server.url("/status/404"))
        }
    }

    @Test("acceptable status codes are configurable")
    func acceptableStatusCodes() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.acceptableStatusCodes = [200] }
            let result = await outcome(downloader, server.url("/status/203"))
            #expect(result.downloadReason.map { if case .invalidStatusCode(203, _) = $0 { true } else { false } } == true)
        }
    }

    @Test("200 with HTML fails as invalidResponse; with acceptable types as invalidContentType")
    func htmlBody() async throws {
        try await withLoopback { server, loader in
            let plain = makeDownloader(loader)
            let result = await outcome(plain, server.url("/html/a"))
            guard case .invalidResponse(let url, let reason)? = result.downloadReason else {
                Issue.record("expected invalidResponse, got \(result)")
                return
            }
            #expect(url == server.url("/html/a"))
            #expect(reason.contains("text/html"))

            let strict = makeDownloader(loader) { $0.acceptableContentTypes = ["image/*"] }
            let typed = await outcome(strict, server.url("/html/b"))
            guard case .invalidContentType(let type, _)? = typed.downloadReason else {
                Issue.record("expected invalidContentType, got \(typed)")
                return
            }
            #expect(type == "text/html")
            #expect(await outcome(strict, server.url("/image/typed")).value != nil)
        }
    }

    @Test("too large: refused from Content-Length before the body")
    func tooLargeUpFront() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumResponseSize = 1000 }
            let url = server.url("/image/big")
            let result = await outcome(downloader, url)
            #expect(result.downloadReason == .responseTooLarge(url: url, limit: 1000, received: 0))
        }
    }

    @Test("too large: enforced while streaming, the transfer is stopped")
    func tooLargeWhileStreaming() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumResponseSize = 1000 }
            // The server sends 2 KiB without Content-Length and holds the rest behind a gate that
            // never opens: the error can only come from the streamed bytes.
            let url = server.url("/gatedchunked/never/big")
            let result = await outcome(downloader, url)
            guard case .responseTooLarge(_, let limit, let received)? = result.downloadReason else {
                Issue.record("expected responseTooLarge, got \(result)")
                return
            }
            #expect(limit == 1000)
            #expect(received > 1000 && received <= 2048)
            #expect(await server.waitUntil { $0.aborted.contains("/gatedchunked/never/big") })
            #expect(!downloader.isOnFailedURLList(url))
        }
    }

    @Test("timeout covers the whole download")
    func timeout() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.timeout = .milliseconds(200) }
            let url = server.url("/gated/never/timeout")
            let result = await outcome(downloader, url)
            #expect(result.downloadReason == .timeout(url: url, seconds: 0.2))
            // If the request reached the server before the timeout (it may not have, on a loaded
            // machine), the server sees its connection close.
            #expect(await server.waitUntil { $0.hits["/gated/never/timeout"] == nil || $0.aborted.contains("/gated/never/timeout") })
            #expect(!downloader.isOnFailedURLList(url))
            // Per-request override.
            let other = server.url("/gated/never/timeout2")
            let overridden = await outcome(makeDownloader(loader), other, DownloadOptions(timeout: .milliseconds(100)))
            #expect(overridden.downloadReason == .timeout(url: other, seconds: 0.1))
        }
    }

    @Test("timeout cancels a stalled body (mock loader)")
    func timeoutCancelsStalledBody() async throws {
        let terminated = Collector<Bool>()
        let loader = StallingLoader(terminated: terminated)
        let downloader = makeDownloader(loader) { $0.timeout = .milliseconds(50) }
        let url = URL(string: "http://stalled.invalid/x.jpg")!
        #expect(await outcome(downloader, url).downloadReason == .timeout(url: url, seconds: 0.05))
        #expect(await terminated.wait(for: 1) == [true])
        #expect(downloader.runningCount == 0)
    }

    @Test("a shorter deadline after a longer one still fires first (one watchdog per downloader)")
    func shorterDeadlineAfterLongerOne() async throws {
        let terminated = Collector<Bool>()
        let downloader = makeDownloader(StallingLoader(terminated: terminated)) { $0.timeout = .seconds(600) }
        let long = URL(string: "http://stalled.invalid/long.jpg")!
        let short = URL(string: "http://stalled.invalid/short.jpg")!
        let longDone = Collector<Bool>()
        let longTask = downloader.download(long) { result in longDone.append((try? result.get()) == nil) }
        // The long request runs at once (its deadline armed the watchdog for 600 s) before the short one starts.
        #expect(downloader.runningCount == 1)
        #expect(await outcome(downloader, short, DownloadOptions(timeout: .milliseconds(50))).downloadReason == .timeout(url: short, seconds: 0.05))
        #expect(downloader.runningCount == 1)
        longTask.cancel()
        #expect(await longDone.wait(for: 1) == [true])
    }

    @Test("redirects are followed and counted")
    func redirects() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let result = await outcome(downloader, server.url("/redirect/3"))
            let value = try #require(result.value)
            #expect(value.data == server.image)
            #expect(value.response.url == server.url("/redirect/0"))
            #expect(value.metrics.redirectCount == 3)
        }
    }

    @Test("the redirect limit fails with tooManyRedirects")
    func redirectLimit() async throws {
        try await withLoopback { server, loader in
            #expect(ImageDownloader.Configuration().maximumRedirects == 10)
            let downloader = makeDownloader(loader) { $0.maximumRedirects = 2 }
            let url = server.url("/redirect/3")
            #expect(await outcome(downloader, url).downloadReason == .tooManyRedirects(url: url, limit: 2))
            #expect(await outcome(downloader, server.url("/redirect/2")).value != nil)
            let defaults = makeDownloader(loader)
            let eleven = server.url("/redirect/11")
            #expect(await outcome(defaults, eleven).downloadReason == .tooManyRedirects(url: eleven, limit: 10))
        }
    }

    @Test("a redirect handler may change or refuse a redirect")
    func redirectHandler() async throws {
        try await withLoopback { server, loader in
            let changing = makeDownloader(loader) {
                $0.redirectHandler = RedirectHandler { proposed, response in
                    #expect(response.statusCode == 302)
                    var request = proposed
                    request.url = server.url("/image/elsewhere")
                    return request
                }
            }
            let changed = await outcome(changing, server.url("/redirect/1"))
            #expect(changed.value?.response.url == server.url("/image/elsewhere"))
            #expect(server.hits("/redirect/0") == 0)

            let refusing = makeDownloader(loader) { $0.redirectHandler = .refuse }
            let refused = await outcome(refusing, server.url("/redirect/1"))
            #expect(refused.downloadReason.map { if case .invalidStatusCode(302, _) = $0 { true } else { false } } == true)
        }
    }

    @Test("basic auth per downloader and per request")
    func credentials() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.credentials = DownloadCredentials(user: "user", password: "pass") }
            #expect(await outcome(downloader, server.url("/auth/1")).value != nil)
            let wrong = DownloadOptions(credentials: DownloadCredentials(user: "user", password: "nope"))
            let result = await outcome(downloader, server.url("/auth/2"), wrong)
            #expect(result.downloadReason.map { if case .invalidStatusCode(401, _) = $0 { true } else { false } } == true)
            let perRequest = DownloadOptions(credentials: DownloadCredentials(user: "user", password: "pass"))
            #expect(await outcome(makeDownloader(loader), server.url("/auth/3"), perRequest).value != nil)
        }
    }

    @Test("a dropped connection fails as a transport error and is not put on the failed-URL list")
    func droppedConnection() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/drop/x")
            let result = await outcome(downloader, url)
            guard case .transport(let failed, _)? = result.downloadReason else {
                Issue.record("expected transport, got \(result)")
                return
            }
            #expect(failed == url)
            #expect(!downloader.isOnFailedURLList(url))
            #expect(!downloader.hasResumableData(for: url))
        }
    }

    @Test("connection refused is a transport error")
    func connectionRefused() async throws {
        let loader = DataLoader()
        let server = try await LoopbackOrigin.start()
        let url = server.url("/image/closed")
        await server.stop()
        let result = await outcome(makeDownloader(loader), url)
        try await loader.shutdown()
        guard case .transport? = result.downloadReason else {
            Issue.record("expected transport, got \(result)")
            return
        }
    }
}

/// Answers 200 with a JPEG prefix, then never sends more; records when the body is abandoned.
private struct StallingLoader: DataLoading {
    let terminated: Collector<Bool>

    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.yield(Data([0xFF, 0xD8, 0xFF]))
        continuation.onTermination = { termination in
            if case .cancelled = termination { terminated.append(true) }
        }
        let response = DownloadResponse(statusCode: 200, headers: ["Content-Type": "image/jpeg"], url: request.url)
        return (response: response, body: DataChunks(stream))
    }
}
