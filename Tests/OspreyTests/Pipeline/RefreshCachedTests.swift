import Foundation
import Testing

@testable import Osprey

@Suite("Pipeline refresh-cached", .timeLimit(.minutes(5)))
struct RefreshCachedTests {
    /// Collects every event of a request.
    static func events(_ pipeline: ImagePipeline, _ source: ImageSource, _ options: [RequestOption]) async throws -> [ImageResult] {
        var results: [ImageResult] = []
        for await event in pipeline.imageTask(for: source, options: options).events {
            if case .finished(let result) = event { results.append(try result.get()) }
        }
        return results
    }

    @Test("a 304 keeps the cached image: one result, revalidated with the stored ETag")
    func notModified() async throws {
        try await PipelineFixture.run { f in
            let path = "/conditional/refresh"
            let source = f.source(path)
            _ = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            let results = try await Self.events(f.pipeline, source, [.cachePolicy(.revalidate)])
            #expect(results.count == 1)
            #expect(results.first?.cacheType == .memory)
            #expect(f.server.hits(path) == 2)
            #expect(f.server.snapshot.headers[path]?["if-none-match"] == "\"v1\"")
        }
    }

    @Test("a 200 replaces the cache and delivers the new image as a second result")
    func modified() async throws {
        try await PipelineFixture.run { f in
            let path = "/image/refresh"
            let source = f.source(path)
            let processor = ImageProcessors.Resize(width: 10, height: 10)
            _ = try await f.pipeline.image(for: source, options: [.processor(processor), .cacheWrites(.beforeDelivery)])
            f.cache.clearMemoryCache()
            let results = try await Self.events(f.pipeline, source, [.processor(processor), .cachePolicy(.revalidate)])
            #expect(results.count == 2)
            #expect(results.first?.cacheType == .disk)
            #expect(results.last?.isRefresh == true)
            #expect(results.last?.image.width == 10)
            #expect(f.server.hits(path) == 2)
        }
    }

    @Test("completion handlers are called twice when the server has a new image")
    func completionTwice() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/twice")
            _ = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            let results = Collector<Result<ImageResult, OspreyError>>()
            f.pipeline.loadImage(with: source, options: [.cachePolicy(.revalidate)]) { results.append($0) }
            let values = await results.wait(for: 2)
            #expect((try? values[0].get())?.isRefresh == false)
            #expect((try? values[1].get())?.isRefresh == true)
        }
    }

    @Test("the validators live in the disk entries: one file each, and a restarted pipeline revalidates with them")
    func validatorsInTheEntry() async throws {
        try await PipelineFixture.run { f in
            let path = "/conditional/restart"
            let source = f.source(path)
            let processor = ImageProcessors.Resize(width: 10, height: 10)
            let options: [RequestOption] = [.processor(processor), .originalStorage(.disk)]
            _ = try await f.pipeline.image(for: source, options: options + [.cacheWrites(.beforeDelivery)])
            await f.cache.diskStorage.waitForPendingWork()
            // The original and the processed image: no validators entry beside them.
            #expect(try entryFiles(in: f.cache.diskStorage.directoryURL).count == 2)
            // A new process on the same directory: memory empty, validators read from the entry.
            let cache = ImageCache(name: "restarted", diskConfig: DiskStorage.Config(name: "test", directory: f.directory))
            let pipeline = ImagePipeline(cache: cache, downloader: makeDownloader(f.loader))
            let results = try await Self.events(pipeline, source, options + [.cachePolicy(.revalidate)])
            #expect(results.count == 1)
            #expect(results.first?.cacheType == .disk)
            #expect(f.server.hits(path) == 2)
            #expect(f.server.snapshot.headers[path]?["if-none-match"] == "\"v1\"")
        }
    }

    @Test("a processed image made from a cached original is revalidated with the original's validators")
    func processedFromCachedOriginal() async throws {
        try await PipelineFixture.run { f in
            let path = "/conditional/derived"
            let source = f.source(path)
            _ = try await f.pipeline.image(for: source, options: [.cacheWrites(.beforeDelivery)])
            let processor = ImageProcessors.Resize(width: 10, height: 10)
            _ = try await f.pipeline.image(for: source, options: [.processor(processor), .cacheWrites(.beforeDelivery)])
            #expect(f.server.hits(path) == 1)
            f.cache.clearMemoryCache()
            let results = try await Self.events(f.pipeline, source, [.processor(processor), .cachePolicy(.revalidate)])
            #expect(results.count == 1)
            #expect(f.server.hits(path) == 2)
            #expect(f.server.snapshot.headers[path]?["if-none-match"] == "\"v1\"")
        }
    }
}
