import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Pipeline shared work", .timeLimit(.minutes(5)))
struct SharedWorkTests {
    @Test("requests with different processors share one download, one decode and their common prefix")
    func coalescingAcrossProcessors() async throws {
        try await PipelineFixture.run { f in
            let path = "/gated/shared/image"
            // The [count] stage stays running until both the [count] request and the [count, blur]
            // stage have subscribed to it, so sharing it does not depend on timing.
            let pipeline = f.pipeline
            let common = CountingProcessor("count", holdUntil: { pipeline.processJobs.waitingCount(where: { $0.key.processors == "count" }) >= 2 })
            let blur = ImageProcessors.Blur(sigma: 1)
            let plain = Task { try await f.pipeline.image(for: f.source(path)) }
            let counted = Task { try await f.pipeline.image(for: f.source(path), options: [.processor(common)]) }
            let countedBlurred = Task { try await f.pipeline.image(for: f.source(path), options: [.processor(common.append(blur))]) }
            _ = await f.server.waitUntil { $0.hits[path, default: 0] == 1 }
            // Let every request reach the shared stages before the bytes arrive.
            try await eventually("3 delivery jobs") { f.pipeline.deliverJobs.count >= 3 }
            f.server.openGate("shared")
            let results = try await [
                plain.value("the plain request"), counted.value("the counted request"), countedBlurred.value("the counted, blurred request")
            ]
            #expect(results.allSatisfy { $0.cacheType == .none && $0.image.width == 128 })
            #expect(f.server.hits(path) == 1)
            #expect(f.decodes == 1)
            #expect(common.count == 1, "the [count] stage ran once for [count] and [count, blur]")
        }
    }

    @Test("1,000 concurrent requests over 100 URLs hit the server exactly 100 times")
    func thousandRequests() async throws {
        try await PipelineFixture.run { f in
            let results = try await withThrowingTaskGroup(of: CacheType.self) { group in
                for index in 0..<1000 {
                    let source = f.source("/image/many/\(index % 100)")
                    group.addTask { try await f.pipeline.image(for: source).cacheType }
                }
                var types: [CacheType] = []
                for try await type in group { types.append(type) }
                return types
            }
            #expect(results.count == 1000)
            let hits = f.server.snapshot.hits.filter { $0.key.hasPrefix("/image/many/") }
            #expect(hits.count == 100)
            #expect(hits.values.allSatisfy { $0 == 1 })
        }
    }

    @Test("a decoded image is freed once its caller and the caches let it go: the shared decode keeps nothing")
    func decodedImageIsFreed() async throws {
        try await PipelineFixture.run { f in
            weak var pixels: VipsImageRef?
            do {
                let result = try await f.pipeline.image(for: f.source("/image/freed"), options: [.storage(.memory)])
                #expect(result.cacheType == .none)
                pixels = result.image.storage
            }
            #expect(pixels != nil, "the memory cache holds it")
            f.cache.clearMemoryCache()
            // The thread that delivered may still be returning from the call (its frame holds the
            // result until then); a finished job, registry or fetched source keeping it never lets go.
            try await eventually("the pixels to be freed: no finished decode job, registry or fetched source still holds them") { pixels == nil }
        }
    }

    @Test("a pipeline that has shared, processed and cached images is freed with its last reference: no job or registry keeps it")
    func pipelineIsFreed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-freed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withLoopback { server, loader in
            weak var weakPipeline: ImagePipeline?
            weak var weakCache: ImageCache?
            do {
                let cache = ImageCache(name: "freed", diskConfig: DiskStorage.Config(name: "freed", directory: directory))
                let pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: makeDownloader(loader)))
                weakPipeline = pipeline
                weakCache = cache
                let sources = (0..<3).map { ImageSource.url(server.url("/image/freed/\($0)")) }
                let blur = ImageProcessors.Blur(sigma: 1)
                // Misses shared between requests with and without a processor, then hits.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for source in sources + sources {
                        group.addTask { _ = try await pipeline.image(for: source) }
                        group.addTask { _ = try await pipeline.image(for: source, options: [.processor(blur)]) }
                    }
                    try await group.waitForAll()
                }
                for source in sources { _ = try await pipeline.image(for: source, options: [.processor(blur)]) }
                await cache.diskStorage.waitForPendingWork()
            }
            // The last deliveries may still be returning on other threads.
            try await eventually("the pipeline and its cache to be freed") { weakPipeline == nil && weakCache == nil }
        }
    }

    @Test("a request that missed memory just before another request stored the image does not download it again")
    func missRacingAStore() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/race")
            let image = try await f.pipeline.image(for: source).image
            #expect(f.server.hits("/image/race") == 1)
            f.cache.memoryStorage.removeAll()
            // The request misses here, then another request's job stores the image and leaves the
            // registry before this request's last stage starts.
            guard case .miss(let miss) = f.cache.memoryStorage.lookup(forKey: source.cacheKey) else {
                Issue.record("the memory cache was emptied")
                return
            }
            try f.cache.memoryStorage.store(image, forKey: source.cacheKey, cost: image.cost)
            // No disk lookup in between: the last stage is next.
            let options = ResolvedOptions([.cachePolicy(.memoryOrLoad)])
            let late = try await f.pipeline.retrieve(f.resolved(source, options, memoryMiss: miss), progress: nil, refresh: nil)
            #expect(late.cacheType == .memory)
            #expect(f.server.hits("/image/race") == 1, "the last stage looked again: something was stored since the miss")
            // Nothing stored since a miss: the miss holds, and the image is loaded.
            f.cache.memoryStorage.removeAll()
            guard case .miss(let second) = f.cache.memoryStorage.lookup(forKey: source.cacheKey) else {
                Issue.record("the memory cache was emptied")
                return
            }
            let fresh = try await f.pipeline.retrieve(f.resolved(source, options, memoryMiss: second), progress: nil, refresh: nil)
            #expect(fresh.cacheType == .none)
            #expect(f.server.hits("/image/race") == 2)
        }
    }

    @Test("a stage is cancelled when its last request goes; the others keep it")
    func stageCancellation() async throws {
        try await PipelineFixture.run { f in
            let path = "/gated/stage/image"
            let first = Task { try await f.pipeline.image(for: f.source(path)) }
            let second = Task { try await f.pipeline.image(for: f.source(path)) }
            _ = await f.server.waitUntil { $0.hits[path, default: 0] == 1 }
            first.cancel()
            await #expect(throws: OspreyError.self) { try await first.value }
            f.server.openGate("stage")
            let remaining = try await second.value("the remaining request")
            #expect(remaining.image.width == 128, "the download went on for the remaining request")
            let lonely = "/gated/lonely/image"
            let only = Task { try await f.pipeline.image(for: f.source(lonely)) }
            _ = await f.server.waitUntil { $0.hits[lonely, default: 0] == 1 }
            only.cancel()
            #expect(await f.server.waitUntil { $0.aborted.contains(lonely) }, "the last request leaving cancels the download")
            #expect(f.pipeline.fetchJobs.count == 0)
        }
    }

    @Test("completion handlers deliver on the callback queue; a cancelled task reports cancellation")
    func completionHandlers() async throws {
        try await PipelineFixture.run { f in
            let queue = DispatchQueue(label: "test.callbacks")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let results = Collector<(Bool, Result<ImageResult, OspreyError>)>()
            f.pipeline.loadImage(with: f.source("/image/handler"), options: [.callbackQueue(.dispatch(queue))]) { result in
                results.append((DispatchQueue.getSpecific(key: key) == true, result))
            }
            let gated = f.pipeline.loadImage(with: f.source("/gated/handler/x"), options: [.callbackQueue(.dispatch(queue))]) { result in
                results.append((DispatchQueue.getSpecific(key: key) == true, result))
            }
            _ = await f.server.waitUntil { $0.hits["/gated/handler/x", default: 0] == 1 }
            gated.cancel()
            let values = await results.wait(for: 2)
            #expect(values.allSatisfy { $0.0 }, "every completion ran on the chosen queue")
            #expect(values.contains { (try? $0.1.get())?.image.width == 128 })
            #expect(values.contains { if case .failure(let error) = $0.1 { error.isCancellation } else { false } })
            #expect(gated.isCancelled)
        }
    }

    @Test("progress is reported while bytes arrive")
    func progress() async throws {
        try await PipelineFixture.run { f in
            var received: [Int] = []
            for await event in f.pipeline.imageTask(for: f.source("/chunked/progress")).events {
                if case .progress(let bytes, _) = event { received.append(bytes) }
            }
            #expect(!received.isEmpty)
            #expect(received == received.sorted())
            #expect(received.last == LoadingTestData.hopperJPEG.count)
        }
    }
}
