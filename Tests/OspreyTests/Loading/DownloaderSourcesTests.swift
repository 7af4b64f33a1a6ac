import Foundation
import Testing

@testable import Osprey

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Downloader sources, events and helpers", .timeLimit(.minutes(5)))
struct DownloaderSourcesTests {
    @Test("file: URLs load locally")
    func fileURL() async throws {
        let downloader = ImageDownloader(loader: FailingLoader())
        let url = LoadingTestData.imagesDirectory.appendingPathComponent("hopper.jpg")
        let result = try await downloader.download(url)
        #expect(result.data == LoadingTestData.hopperJPEG)
        #expect(result.response.statusCode == 200)
        let missing = LoadingTestData.imagesDirectory.appendingPathComponent("missing.jpg")
        guard case .transport? = await outcome(downloader, missing).downloadReason else {
            Issue.record("expected transport error for a missing file")
            return
        }
        #expect(!downloader.isOnFailedURLList(missing))
    }

    @Test("data: URLs decode locally; non-image data fails as invalidResponse")
    func dataURL() async throws {
        let downloader = ImageDownloader(loader: FailingLoader())
        let base64 = LoadingTestData.hopperJPEG.base64EncodedString()
        let url = URL(string: "data:image/jpeg;base64,\(base64)")!
        let result = try await downloader.download(url)
        #expect(result.data == LoadingTestData.hopperJPEG)
        #expect(result.response.mimeType == "image/jpeg")
        let text = URL(string: "data:text/plain,hello")!
        guard case .invalidResponse? = await outcome(downloader, text).downloadReason else {
            Issue.record("expected invalidResponse")
            return
        }
    }

    @Test("data: URL parsing")
    func dataURLParsing() throws {
        let (data, mime) = try LocalURLLoader.decodeDataURL("data:,A%20brief%20note")
        #expect(String(decoding: data, as: UTF8.self) == "A brief note")
        #expect(mime == "text/plain")
        let (png, pngType) = try LocalURLLoader.decodeDataURL("data:image/png;base64,iVBORw0KGgo=")
        #expect(pngType == "image/png")
        #expect(Array(png) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(throws: OspreyError.self) { try LocalURLLoader.decodeDataURL("data:image/png;base64") }
    }

    @Test("unsupported schemes fail as invalidURL")
    func invalidURL() async throws {
        let downloader = ImageDownloader(loader: FailingLoader())
        let url = URL(string: "gopher://example.com/x")!
        #expect(await outcome(downloader, url).downloadReason == .invalidURL(url.absoluteString))
    }

    @Test("custom data providers are validated and modified like downloads")
    func providers() async throws {
        let downloader = ImageDownloader(loader: FailingLoader())
        let provider = RawImageDataProvider(data: LoadingTestData.hopperJPEG, cacheKey: "hopper")
        #expect(try await downloader.download(provider: provider).data == LoadingTestData.hopperJPEG)
        let file = LocalFileImageDataProvider(fileURL: LoadingTestData.imagesDirectory.appendingPathComponent("hopper.jpg"))
        #expect(try await downloader.download(provider: file).data == LoadingTestData.hopperJPEG)
        let base64 = try #require(RawImageDataProvider(base64: LoadingTestData.hopperJPEG.base64EncodedString(), cacheKey: "b"))
        let prefixed = DownloadOptions(responseDataModifier: ResponseDataModifier { data, _ in data.prefix(3) })
        #expect(try await downloader.download(provider: base64, options: prefixed).data == LoadingTestData.hopperJPEG.prefix(3))

        let html = RawImageDataProvider(data: Data("<html>".utf8), cacheKey: "html")
        await #expect(throws: OspreyError.self) { try await downloader.download(provider: html) }
        do {
            _ = try await downloader.download(provider: ThrowingProvider())
            Issue.record("expected an error")
        } catch let error as OspreyError {
            guard case .download(.transport(_, let message)) = error else {
                Issue.record("expected transport, got \(error)")
                return
            }
            #expect(message.contains("boom"))
        }
    }

    @Test("events: will-download, did-receive-response, did-finish with metrics")
    func events() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let stream = downloader.events()
            #expect(await outcome(downloader, server.url("/redirect/1")).value != nil)
            var willDownload: [URL] = []
            var responses: [Int] = []
            for await event in stream {
                switch event {
                case .willDownload(let request):
                    willDownload.append(request.url)
                case .didReceiveResponse(let response, _):
                    responses.append(response.statusCode)
                case .didFinish(let url, let result, let metrics):
                    #expect(url == server.url("/redirect/1"))
                    #expect((try? result.get())?.statusCode == 200)
                    #expect(metrics.receivedBytes == server.image.count)
                    #expect(metrics.redirectCount == 1)
                    #expect(metrics.duration > .zero)
                }
                if case .didFinish = event { break }
            }
            #expect(willDownload == [server.url("/redirect/1"), server.url("/redirect/0")])
            #expect(responses == [200])
        }
    }

    @Test("DownloadRequest header names are case-insensitive")
    func headerNames() {
        var request = DownloadRequest(url: URL(string: "http://x/")!, headers: ["Accept": "a"])
        request.setValue("b", forHTTPHeaderField: "accept")
        #expect(request.headers == ["accept": "b"])
        #expect(request.value(forHTTPHeaderField: "ACCEPT") == "b")
        request.setValue(nil, forHTTPHeaderField: "Accept")
        #expect(request.headers.isEmpty)
        #expect(DownloadCredentials(user: "user", password: "pass").authorizationHeaderValue == "Basic dXNlcjpwYXNz")
    }

    @Test("retry strategy delays and Retry-After parsing")
    func retryHelpers() {
        let request = DownloadRequest(url: URL(string: "http://x/")!)
        let error = OspreyError.download(.transport(url: request.url, message: "reset"))
        func context(_ count: Int) -> RetryContext { RetryContext(request: request, error: error, retryCount: count, retryAfter: nil) }
        let fixed = RetryStrategy(maxRetryCount: 2, interval: .fixed(.seconds(1)))
        #expect(fixed.retryDelay(for: context(0)) == .seconds(1))
        #expect(fixed.retryDelay(for: context(1)) == .seconds(1))
        #expect(fixed.retryDelay(for: context(2)) == nil)
        let growing = RetryStrategy(maxRetryCount: 3, interval: .accumulated(.seconds(2)))
        #expect(growing.retryDelay(for: context(0)) == .seconds(2))
        #expect(growing.retryDelay(for: context(2)) == .seconds(6))

        #expect(RetryAfter.parse("120") == .seconds(120))
        #expect(RetryAfter.parse(nil) == nil)
        let now = Date(timeIntervalSince1970: 1_445_412_470)  // Wed, 21 Oct 2015 07:27:50 GMT
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == .seconds(10))

        let response = DownloadResponse(statusCode: 503, headers: ["Retry-After": "7"], url: request.url)
        #expect(RetryContext.retriability(of: .download(.invalidStatusCode(503, response: response))) == .some(.seconds(7)))
        #expect(RetryContext.retriability(of: error) == .some(nil))
        #expect(RetryContext.retriability(of: .download(.invalidStatusCode(404, response: response))) == nil)
        #expect(RetryContext.retriability(of: .download(.cancelled(url: URL(string: "http://x/")!))) == nil)
        #expect(RetryContext.retriability(of: .download(.timeout(url: request.url, seconds: 1))) == nil)
    }

    @Test("a refused connection says so once, with the URL and the errno")
    func refusedConnection() async throws {
        // A port bound and not listening: connects are refused, and no other test can take it.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        #expect(bound)
        let url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/image/refused")!
        let loader = DataLoader()
        let failure = await outcome(makeDownloader(loader), url)
        try await loader.shutdown()
        guard case .transport(_, let message)? = failure.downloadReason else {
            Issue.record("expected a transport failure, got \(failure)")
            return
        }
        #expect(message == "Connection refused (errno \(ECONNREFUSED))")
        #expect(OspreyError.download(failure.downloadReason!).description == "cannot download \(url.absoluteString): \(message)")
    }

    @Test("error descriptions name the URL and the reason")
    func descriptions() {
        let url = URL(string: "http://x/a.jpg")!
        let response = DownloadResponse(statusCode: 404, url: url)
        #expect(OspreyError.download(.invalidStatusCode(404, response: response)).description == "cannot download http://x/a.jpg: HTTP status 404")
        #expect(OspreyError.download(.previouslyFailed(url: url)).description.contains("failed before"))
        #expect(OspreyError.download(.responseTooLarge(url: url, limit: 10, received: 11)).description.contains("exceeds 10 bytes"))
    }
}

/// A loader that must not be used.
private struct FailingLoader: DataLoading {
    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        Issue.record("the network loader was used for \(request.url)")
        throw CancellationError()
    }
}

private struct ThrowingProvider: ImageDataProvider {
    struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }
    var cacheKey: String { "throwing" }
    func data() async throws -> Data { throw Boom() }
}
