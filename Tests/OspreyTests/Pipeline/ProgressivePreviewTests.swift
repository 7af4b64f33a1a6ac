import Foundation
import Synchronization
import Testing

@testable import Osprey

/// Progressive previews through the pipeline, from a loopback origin that sends a progressive
/// JPEG one scan at a time: each piece ends just after the marker that ends a scan, and the next
/// piece goes only when the test opens its gate (`/paced`), after the preview of the previous
/// one came. Nothing depends on timing: the interval is 0 and every step waits for an event.
@Suite("Progressive previews", .timeLimit(.minutes(5)))
struct ProgressivePreviewTests {
    /// The progressive test image and the cuts that send it a scan at a time (each cut two bytes
    /// past a scan's end, where the scanner sees the marker that ends it).
    static func pacedBody() throws -> (data: Data, cuts: [Int]) {
        let data = try ProgressiveTestData.progressive()
        let cuts = ProgressiveTestData.boundaries(data).boundaries.map { $0 + 2 }.filter { $0 < data.count }
        return (data, cuts)
    }

    /// Every scan boundary makes a preview: no interval, no cost limit.
    static let previews: [RequestOption] = [.progressiveJPEG(ProgressiveJPEG(interval: 0, limitsDecodeCost: false))]

    @Test("one events stream: progress, a preview per scan, then the result, in that order")
    func eventsInOrder() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try Self.pacedBody()
            f.server.setBody("events", data, cuts: cuts)
            var iterator = f.pipeline.imageTask(for: f.source("/paced/events/a"), options: Self.previews).events.makeAsyncIterator()
            f.server.openGate("events-0")
            var kinds: [String] = []
            var gate = 0
            while let event = await iterator.next() {
                switch event {
                case .progress(let received, let expected):
                    #expect(expected == data.count && received <= data.count)
                    if kinds.last != "progress" { kinds.append("progress") }
                case .preview(let preview):
                    #expect(preview.isPreview)
                    kinds.append("preview")
                    gate += 1
                    f.server.openGate("events-\(gate)")
                case .finished(let result):
                    #expect(try !result.get().isPreview)
                    kinds.append("finished")
                }
            }
            let expected = Array(repeating: ["progress", "preview"], count: cuts.count).flatMap { $0 } + ["progress", "finished"]
            #expect(kinds == expected, "progress before each preview, every preview before the result")
        }
    }

    @Test("a scan at a time: a preview per scan, each at the final size and closer to it than the last, then the final image; never cached")
    func previewsThenFinal() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try Self.pacedBody()
            #expect(cuts.count >= 3)
            f.server.setBody("prog", data, cuts: cuts)
            let source = f.source("/paced/prog/a")
            // The final image on disk when it comes, for the check of the caches below.
            var iterator = f.pipeline.images(for: source, options: Self.previews + [.cacheWrites(.beforeDelivery)]).makeAsyncIterator()
            f.server.openGate("prog-0")
            var previews: [ImageResult] = []
            for gate in 1...cuts.count {
                let preview = try #require(try await iterator.next())
                #expect(preview.isPreview)
                #expect(preview.cacheType == .none)
                #expect(preview.preview?.index == gate && preview.preview?.scans == gate)
                #expect(preview.preview?.receivedBytes == cuts[gate - 1] && preview.preview?.expectedBytes == data.count)
                // While previews come, neither cache holds anything for the source.
                #expect(f.pipeline.cachedImage(for: source) == nil)
                #expect(f.pipeline.cachedType(for: source) == .none)
                previews.append(preview)
                f.server.openGate("prog-\(gate)")
            }
            let final = try #require(try await iterator.next())
            #expect(!final.isPreview && final.preview == nil)
            #expect(try await iterator.next() == nil)

            let finalPixels = try final.image.rgbaPixels()
            var differences: [Double] = []
            for preview in previews {
                #expect(preview.image.width == final.image.width && preview.image.height == final.image.height)
                differences.append(Pixels.meanDifference(try preview.image.rgbaPixels(), finalPixels))
            }
            for index in differences.indices.dropFirst() {
                #expect(differences[index] < differences[index - 1], "mean differences from the final image: \(differences)")
            }
            // The caches hold the final image, not a preview.
            await f.cache.diskStorage.waitForPendingWork()
            let cached = try #require(f.pipeline.cachedImage(for: source))
            #expect(try cached.rgbaPixels() == finalPixels)
            let key = f.pipeline.cacheKey(for: source)
            let stored = try #require(await f.cache.diskStorage.value(forKey: key))
            #expect(stored == data, "the disk cache holds the downloaded bytes")
            #expect(f.server.hits("/paced/prog/a") == 1)
            #expect(f.pipeline.previews.kept == 0)
        }
    }

    @Test("with the cost limit (the default), each preview has twice the bytes of the last, and none comes from more than half the body")
    func costLimit() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try Self.pacedBody()
            f.server.setBody("limit", data, cuts: cuts)
            // The previews the rule allows, by the bytes received when each is made.
            var expected: [Int] = []
            var last = 0
            for cut in cuts where cut - 2 >= 2 * last && 2 * cut <= data.count {
                expected.append(cut)
                last = cut - 2
            }
            #expect(expected.count >= 2 && expected.count < cuts.count, "expected previews at \(expected) of \(cuts)")
            let queue = DispatchQueue(label: "previews.limit")
            let received = AsyncStream<Int>.makeStream()
            let previews = AsyncStream<ImageResult>.makeStream()
            let done = AsyncStream<Result<ImageResult, OspreyError>>.makeStream()
            f.pipeline.loadImage(
                with: f.source("/paced/limit/a"), options: [.progressiveJPEG(ProgressiveJPEG(interval: 0)), .callbackQueue(.dispatch(queue))],
                progress: { bytes, _ in received.continuation.yield(bytes) },
                preview: { previews.continuation.yield($0) },
                completion: { done.continuation.yield($0) })
            f.server.openGate("limit-0")
            var progress = received.stream.makeAsyncIterator()
            var previewIterator = previews.stream.makeAsyncIterator()
            var made: [Int] = []
            for (index, cut) in cuts.enumerated() {
                // The piece is in (and was shown to the previewer) before the next one goes.
                while let bytes = await progress.next(), bytes < cut {}
                if expected.contains(cut), let preview = await previewIterator.next() {
                    made.append(preview.preview?.receivedBytes ?? 0)
                }
                f.server.openGate("limit-\(index + 1)")
            }
            var results = done.stream.makeAsyncIterator()
            let final = try #require(await results.next())
            #expect(try final.get().isPreview == false)
            queue.sync {}
            previews.continuation.finish()
            while let extra = await previewIterator.next() { made.append(extra.preview?.receivedBytes ?? 0) }
            #expect(made == expected)
        }
    }

    @Test("coalesced requests share the download and its previews: each gets them through its own processors, at its final size")
    func coalesced() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try Self.pacedBody()
            f.server.setBody("shared", data, cuts: cuts)
            let source = f.source("/paced/shared/a")
            let thumbnail = Self.previews + [.processor(ImageProcessors.Resize(width: 200, height: 200, contentMode: .fit))]
            var full = f.pipeline.images(for: source, options: Self.previews).makeAsyncIterator()
            var small = f.pipeline.images(for: source, options: thumbnail).makeAsyncIterator()
            let gray = Self.previews + [.processor(ImageProcessors.Grayscale())]
            // A request through the completion handlers, counting its previews.
            let counted = Atomic<Int>(0)
            let done = AsyncStream<Result<ImageResult, OspreyError>>.makeStream()
            let queue = DispatchQueue(label: "previews.test")
            f.pipeline.loadImage(
                with: source, options: gray + [.callbackQueue(.dispatch(queue))],
                preview: { result in
                    if result.isPreview { counted.add(1, ordering: .relaxed) }
                },
                completion: { done.continuation.yield($0) })
            // The first piece goes once all three listen, so that each gets every preview.
            #expect(await Self.waitFor { f.pipeline.previews.listening == 3 })
            f.server.openGate("shared-0")
            var smallSizes: Set<String> = []
            for gate in 1...cuts.count {
                let a = try #require(try await full.next())
                let b = try #require(try await small.next())
                #expect(a.isPreview && b.isPreview)
                #expect(a.preview?.index == gate && b.preview?.index == gate)
                smallSizes.insert("\(b.image.width)x\(b.image.height)")
                f.server.openGate("shared-\(gate)")
            }
            let finalFull = try #require(try await full.next())
            let finalSmall = try #require(try await small.next())
            #expect(!finalFull.isPreview && !finalSmall.isPreview)
            #expect(smallSizes == ["\(finalSmall.image.width)x\(finalSmall.image.height)"], "previews at the final size")
            #expect(max(finalSmall.image.width, finalSmall.image.height) == 200)
            var results = done.stream.makeAsyncIterator()
            let grayResult = try #require(await results.next())
            #expect(try grayResult.get().image.width == finalFull.image.width)
            queue.sync {}
            #expect(counted.load(ordering: .relaxed) >= 1, "the request through completion handlers got previews")
            #expect(f.server.hits("/paced/shared/a") == 1, "one download for all three")
        }
    }

    @Test("a baseline JPEG served in the same pieces yields no preview, only the final image")
    func baselineNone() async throws {
        try await PipelineFixture.run { f in
            let data = try ProgressiveTestData.baseline()
            let cuts = stride(from: 4096, to: data.count, by: 8192).map { $0 }
            f.server.setBody("base", data, cuts: cuts)
            for gate in 0...cuts.count { f.server.openGate("base-\(gate)") }
            var results: [ImageResult] = []
            for try await result in f.pipeline.images(for: f.source("/paced/base/a"), options: Self.previews) {
                results.append(result)
            }
            #expect(results.count == 1)
            #expect(results.first?.isPreview == false)
            #expect(f.pipeline.previews.kept == 0)
        }
    }

    @Test("cancelling mid-download stops the previews: none after the cancellation, the download stops")
    func cancelStops() async throws {
        try await PipelineFixture.run { f in
            let (data, cuts) = try Self.pacedBody()
            f.server.setBody("cancel", data, cuts: cuts)
            let queue = DispatchQueue(label: "previews.cancel")
            let previews = Atomic<Int>(0)
            let first = AsyncStream<Void>.makeStream()
            let done = AsyncStream<Result<ImageResult, OspreyError>>.makeStream()
            let task = f.pipeline.loadImage(
                with: f.source("/paced/cancel/a"), options: Self.previews + [.callbackQueue(.dispatch(queue))],
                preview: { _ in
                    previews.add(1, ordering: .relaxed)
                    first.continuation.yield()
                },
                completion: { done.continuation.yield($0) })
            f.server.openGate("cancel-0")
            var firstIterator = first.stream.makeAsyncIterator()
            _ = await firstIterator.next()
            task.cancel()
            var results = done.stream.makeAsyncIterator()
            let result = try #require(await results.next())
            guard case .failure(.pipeline(.cancelled)) = result else {
                Issue.record("expected a cancellation, got \(result)")
                return
            }
            let atCancel = previews.load(ordering: .relaxed)
            // The cancellation reaches the transfer asynchronously. The rest of the body is held
            // back until the server has seen the connection close: sent earlier, it could all fit
            // in the socket's buffers before the close, and the server would count it delivered.
            let downloader = f.pipeline.configuration.downloader
            #expect(await Self.waitFor { downloader.runningCount == 0 }, "the download stopped")
            #expect(await Self.waitFor { f.pipeline.previews.kept == 0 }, "the previewer was dropped")
            #expect(await f.server.waitUntil { $0.aborted.contains("/paced/cancel/a") || $0.completed["/paced/cancel/a"] != nil })
            for gate in 1...cuts.count { f.server.openGate("cancel-\(gate)") }
            queue.sync {}
            #expect(previews.load(ordering: .relaxed) == atCancel, "no preview after the cancellation")
            #expect(f.server.snapshot.aborted.contains("/paced/cancel/a"), "the download stopped")
            #expect(f.pipeline.previews.kept == 0)
        }
    }

    /// Polls `condition` every 10 ms until it holds (`true`) or 30 s pass (`false`): a safety net,
    /// no test relies on the time.
    static func waitFor(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}

extension PreviewRegistry {
    /// How many previewers the registry keeps (0 once every download and listener is done).
    var kept: Int { previewers.withLock { $0.count } }
    /// How many listeners are attached.
    var listening: Int { listeners.load(ordering: .relaxed) }
}
