import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Pipeline retrieve flow", .timeLimit(.minutes(5)))
struct RetrieveFlowTests {
    @Test("the lookup order by cache policy: memory, disk, share, original memory, original disk, then load (or fail)")
    func lookupOrder() {
        let pipeline = ImagePipeline(cache: ImageCache(name: "order-\(UUID().uuidString)"))
        func steps(_ items: [RequestOption]) -> [RetrieveStep] {
            var miss: ResolvedRequest?
            _ = pipeline.resolve(.url(URL(string: "http://127.0.0.1:1/order")!), items: items, miss: &miss)
            guard let request = miss else { return [] }
            var steps: [RetrieveStep] = [request.step(after: nil)]
            while steps.count < 10, steps.last != .load, steps.last != .fail { steps.append(request.step(after: steps.last)) }
            return steps
        }
        let grey = RequestOption.processor(ImageProcessors.Grayscale())
        #expect(steps([grey]) == [.memory, .disk, .share, .originalMemory, .originalDisk, .load])
        #expect(steps([grey, .cachePolicy(.revalidate)]) == [.memory, .disk, .share, .originalMemory, .originalDisk, .load])
        #expect(steps([grey, .cachePolicy(.memoryOrLoad)]) == [.memory, .share, .originalMemory, .load])
        #expect(steps([grey, .cachePolicy(.reload)]) == [.share, .load])
        #expect(steps([grey, .cachePolicy(.cacheOnly)]) == [.memory, .disk, .share, .originalMemory, .originalDisk, .fail])
        // Unprocessed, the original's memory entry is the processed one, looked up already.
        #expect(steps([]) == [.memory, .disk, .share, .originalDisk, .load])
        // An animation decoded frame by frame reads the original's bytes in the fetch, not the processed entry.
        #expect(steps([.animationFramesOnDemand(true)]) == [.memory, .share, .originalDisk, .load])
    }

    @Test("load, then memory, then disk, then force refresh")
    func cacheTypes() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/flow")
            let first = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            #expect(first.cacheType == .none)
            #expect((first.image.width, first.image.height) == (128, 128))
            #expect(f.server.hits("/image/flow") == 1)
            #expect(try await f.pipeline.image(for: source).cacheType == .memory)
            #expect(f.pipeline.cachedImage(for: source) != nil)
            f.cache.clearMemoryCache()
            #expect(f.pipeline.cachedType(for: source) == .disk)
            #expect(try await f.pipeline.image(for: source).cacheType == .disk)
            #expect(try await f.pipeline.image(for: source).cacheType == .memory, "a disk hit is promoted to memory")
            let refreshed = try await f.pipeline.image(for: source, options: [.cachePolicy(.reload), .cacheWrites(.beforeDelivery)])
            #expect(refreshed.cacheType == .none)
            #expect(f.server.hits("/image/flow") == 2)
        }
    }

    @Test("from-memory-or-refresh skips the disk; only-from-cache never loads")
    func cacheOnlyOptions() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/mem")
            do {
                _ = try await f.pipeline.image(for: source, options: [.cachePolicy(.cacheOnly)])
                Issue.record("only-from-cache loaded an uncached image")
            } catch let error as OspreyError {
                #expect(error == .pipeline(.imageNotExisting(key: f.server.url("/image/mem").absoluteString)))
            }
            #expect(f.server.hits("/image/mem") == 0)
            _ = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            f.cache.clearMemoryCache()
            #expect(try await f.pipeline.image(for: source, options: [.cachePolicy(.cacheOnly)]).cacheType == .disk)
            f.cache.clearMemoryCache()
            let reloaded = try await f.pipeline.image(for: source, options: [.cachePolicy(.memoryOrLoad), .cacheWrites(.beforeDelivery)])
            #expect(reloaded.cacheType == .none)
            #expect(f.server.hits("/image/mem") == 2)
        }
    }

    @Test("memory-only caching writes nothing to disk")
    func memoryOnly() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/memonly")
            _ = try await f.pipeline.image(for: source, options: [.storage(.memory), .cacheWrites(.beforeDelivery)])
            #expect(f.pipeline.cachedType(for: source) == .memory)
            f.cache.clearMemoryCache()
            #expect(f.pipeline.cachedType(for: source) == .none)
        }
    }

    @Test("wait-for-cache delivers after the disk write; without it the memory write is already done")
    func waitForCacheOrdering() async throws {
        try await PipelineFixture.run { f in
            let processor = ImageProcessors.Resize(width: 32, height: 32)
            let waited = f.source("/image/waited")
            _ = try await f.pipeline.image(for: waited, options: [.processor(processor), .cacheWrites(.beforeDelivery)])
            #expect(
                f.cache.diskStorage.isCached(
                    forKey: ImageCache.computedKey(f.server.url("/image/waited").absoluteString, processorIdentifier: processor.identifier)))
            let quick = f.source("/image/quick")
            _ = try await f.pipeline.image(for: quick, options: [.processor(processor)])
            #expect(f.pipeline.cachedImage(for: quick, options: [.processor(processor)]) != nil)
            await f.cache.diskStorage.waitForPendingWork()
        }
    }

    @Test("the original cache serves a second processor without a download")
    func originalCacheReuse() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/original")
            let small = try await f.pipeline.image(
                for: source,
                options: [.processor(ImageProcessors.Resize(width: 20, height: 20)), .originalStorage(.disk), .cacheWrites(.beforeDelivery)])
            #expect(small.cacheType == .none && small.image.width == 20)
            let grey = try await f.pipeline.image(for: source, options: [.processor(ImageProcessors.Grayscale())])
            #expect(grey.cacheType == .disk, "the original bytes came from the disk cache")
            #expect(grey.image.width == 128)
            #expect(f.server.hits("/image/original") == 1)
        }
    }

    @Test("processing and decoding options shape the delivered image; the modifier is not cached")
    func processingAndModifier() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/modified")
            let rotate: @Sendable (Image) -> Image = { image in (try? ImageProcessors.Rotate(degrees: 90).process(image)) ?? image }
            let options: [RequestOption] = [
                .thumbnail(.init(maxPixelSize: 64)), .processor(ImageProcessors.Crop(width: 32, height: 16)), .imageModifier(rotate), .returnsData
            ]
            let result = try await f.pipeline.image(for: source, options: options)
            #expect((result.image.width, result.image.height) == (16, 32))
            #expect(result.data?.count == LoadingTestData.hopperJPEG.count)
            let cached = try #require(f.pipeline.cachedImage(for: source, options: [.processor(ImageProcessors.Crop(width: 32, height: 16))]))
            #expect((cached.width, cached.height) == (32, 16), "the cache holds the unmodified image")
        }
    }

    @Test("alternative sources are tried in order; all failing lists every error")
    func alternativeSources() async throws {
        try await PipelineFixture.run { f in
            let main = f.source("/status/404")
            let result = try await f.pipeline.image(for: main, options: [.alternativeSources([f.source("/status/500"), f.source("/image/alt")])])
            #expect(result.source.url == f.server.url("/image/alt"))
            #expect(result.originalSource.url == f.server.url("/status/404"))
            do {
                _ = try await f.pipeline.image(for: f.source("/status/410"), options: [.alternativeSources([f.source("/html/x")])])
                Issue.record("expected a failure")
            } catch let error as OspreyError {
                guard case .pipeline(.allSourcesFailed(let sources, let errors)) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(sources.count == 2 && errors.count == 2)
                guard case .download(.invalidStatusCode(410, _)) = errors[0] else {
                    Issue.record("first: \(errors[0])")
                    return
                }
            }
        }
    }

    @Test("a failure is typed: 404, HTML and undecodable providers")
    func failures() async throws {
        try await PipelineFixture.run { f in
            await #expect(throws: OspreyError.self) { try await f.pipeline.image(for: f.source("/status/404")) }
            struct Garbage: ImageDataProvider {
                var cacheKey: String { "garbage" }
                func data() async throws -> Data { Data(repeating: 0x42, count: 100) }
            }
            do {
                _ = try await f.pipeline.image(for: .provider(Garbage()))
                Issue.record("garbage decoded")
            } catch let error as OspreyError {
                #expect(!error.isCancellation)
            }
            #expect(f.pipeline.cachedType(for: .provider(Garbage())) == .none, "nothing was cached")
        }
    }

    @Test("data providers load, decode and cache under their key")
    func provider() async throws {
        try await PipelineFixture.run { f in
            let provider = RawImageDataProvider(data: LoadingTestData.hopperJPEG, cacheKey: "raw-hopper")
            let result = try await f.pipeline.image(for: .provider(provider), options: [.cacheWrites(.beforeDelivery)])
            #expect(result.cacheType == .none && result.image.width == 128)
            #expect(try await f.pipeline.image(for: .provider(provider)).cacheType == .memory)
        }
    }

    @Test("cancelling the Swift task cancels the request")
    func cancellation() async throws {
        try await PipelineFixture.run { f in
            let task = Task { try await f.pipeline.image(for: f.source("/gated/never/cancel")) }
            _ = await f.server.waitUntil { $0.hits["/gated/never/cancel", default: 0] == 1 }
            task.cancel()
            do {
                _ = try await task.value("the cancelled request's outcome")
                Issue.record("a cancelled request succeeded")
            } catch let error as OspreyError {
                #expect(error.isCancellation)
            }
            #expect(await f.server.waitUntil { $0.aborted.contains("/gated/never/cancel") }, "the server saw the connection close")
        }
    }

    @Test("per-request retry strategy and redirect handler reach the downloader")
    func perRequestRetryAndRedirect() async throws {
        try await PipelineFixture.run { f in
            let retried = try await f.pipeline.image(
                for: f.source("/flaky/pipeline?fail=1&code=503"),
                options: [.retryStrategy(RetryStrategy(maxRetryCount: 2, interval: .fixed(.zero)))])
            #expect(retried.image.width == 128)
            #expect(f.server.hits("/flaky/pipeline?fail=1&code=503") == 2)
            await #expect(throws: OspreyError.self) {
                try await f.pipeline.image(for: f.source("/flaky/plain?fail=1&code=503"))
            }
            do {
                _ = try await f.pipeline.image(for: f.source("/redirect/2"), options: [.redirectHandler { _, _ in nil }])
                Issue.record("a refused redirect succeeded")
            } catch let error as OspreyError {
                guard case .download(.invalidStatusCode(302, _)) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
            }
            #expect(try await f.pipeline.image(for: f.source("/redirect/2")).image.width == 128)
        }
    }
}
