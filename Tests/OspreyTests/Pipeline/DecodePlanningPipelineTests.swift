import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// Decode planning through the pipeline, and a cache that gives back what it was given.
@Suite("Pipeline decode planning and cache fidelity", .timeLimit(.minutes(3)))
struct DecodePlanningPipelineTests {
    @Test("two sizes of one URL share one download; chains needing one decode size share one decode")
    func sharing() async throws {
        try await PipelineFixture.run { f in
            let path = "/gated/sizes/image"
            let small = try ProcessingSpec(parsing: "thumbnail:32").processor
            let medium = try ProcessingSpec(parsing: "thumbnail:64").processor
            let mediumBlurred = try ProcessingSpec(parsing: "thumbnail:64,blur:1").processor
            let requests = [small, medium, mediumBlurred].map { processor in
                Task { try await f.pipeline.image(for: f.source(path), options: [.processor(processor)]) }
            }
            _ = await f.server.waitUntil { $0.hits[path, default: 0] == 1 }
            try await eventually("3 delivery jobs") { f.pipeline.deliverJobs.count >= 3 }
            f.server.openGate("sizes")
            var results: [ImageResult] = []
            for request in requests { results.append(try await request.value("a request of \(path)")) }
            #expect(f.server.hits(path) == 1, "one download for every size")
            #expect(f.decodes == 2, "one decode per decode size (32, 64)")
            #expect(results.map(\.image.width) == [32, 64, 64])
            #expect(results.allSatisfy { $0.decoded?.shrunkOnLoad == true })
            #expect(results.map { $0.decoded?.width } == [32, 64, 64])
        }
    }

    @Test("a size requested right after another one's download ended finds the original on disk")
    func originalStoredBeforeTheFetchEnds() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/sequential-sizes")
            for size in [32, 48, 64] {
                let result = try await f.pipeline.image(
                    for: source,
                    options: [
                        .processor(ImageProcessors.Downsample(maxPixelSize: size)),
                        .originalStorage(.disk)
                    ])
                #expect(result.image.width == size)
            }
            #expect(f.server.hits("/image/sequential-sizes") == 1, "the later sizes read the stored original")
        }
    }

    @Test("a chain that needs the full image shares the full decode with unprocessed requests")
    func fullDecodeShared() async throws {
        try await PipelineFixture.run { f in
            let path = "/gated/full/image"
            let plain = Task { try await f.pipeline.image(for: f.source(path)) }
            let blurred = Task { try await f.pipeline.image(for: f.source(path), options: [.processor(ImageProcessors.Blur(sigma: 1))]) }
            _ = await f.server.waitUntil { $0.hits[path, default: 0] == 1 }
            try await eventually("2 delivery jobs") { f.pipeline.deliverJobs.count >= 2 }
            f.server.openGate("full")
            let results = try await [plain.value("the plain request"), blurred.value("the blurred request")]
            #expect(f.decodes == 1)
            #expect(results.allSatisfy { $0.decoded == DecodeInfo(width: 128, height: 128, shrunkOnLoad: false) })
        }
    }

    @Test("round corners on a JPEG: a fresh load, a memory hit and a disk hit keep the same transparent pixels")
    func alphaSurvivesTheCache() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/round")
            let options: [RequestOption] = [
                .processor(try ProcessingSpec(parsing: "resize:100x100:fill,round:30").processor), .cacheWrites(.beforeDelivery)
            ]
            let fresh = try await f.pipeline.image(for: source, options: options)
            #expect(fresh.cacheType == .none && fresh.image.hasAlpha && fresh.image.format == .png)
            let memory = try await f.pipeline.image(for: source, options: options)
            #expect(memory.cacheType == .memory)
            f.cache.memoryStorage.removeAll()
            let disk = try await f.pipeline.image(for: source, options: options)
            #expect(disk.cacheType == .disk)
            for result in [memory, disk] {
                #expect(result.image.hasAlpha && result.image.format == .png)
                #expect(try result.image.rgbaPixels() == fresh.image.rgbaPixels(), "\(result.cacheType): pixels differ")
            }
            #expect(try Pixels.pixel(disk.image, x: 0, y: 0)[3] == 0, "the corner stays transparent")
        }
    }

    @Test("an animated GIF resized and cached comes back animated from disk")
    func animationSurvivesTheCache() async throws {
        try await PipelineFixture.run { f in
            let source = ImageSource.url(TestData.url("iss634.gif"))
            let options: [RequestOption] = [.processor(ImageProcessors.Resize(width: 100, height: 100)), .cacheWrites(.beforeDelivery)]
            let fresh = try await f.pipeline.image(for: source, options: options)
            #expect(fresh.image.frameCount == 42 && fresh.decoded?.shrunkOnLoad == true)
            f.cache.memoryStorage.removeAll()
            let disk = try await f.pipeline.image(for: source, options: options)
            #expect(disk.cacheType == .disk)
            #expect(disk.image.frameCount == 42 && disk.image.format == .gif)
            #expect(disk.image.width == fresh.image.width && disk.image.height == fresh.image.height)
            #expect(disk.image.frameDelays == fresh.image.frameDelays)
        }
    }

    @Test("a processed original from the disk cache is decoded with the plan too")
    func originalFromDisk() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/original")
            _ = try await f.pipeline.image(
                for: source, options: [.processor(ImageProcessors.Blur(sigma: 1)), .originalStorage(.disk), .cacheWrites(.beforeDelivery)])
            f.cache.memoryStorage.removeAll()
            let result = try await f.pipeline.image(for: source, options: [.processor(ImageProcessors.Downsample(maxPixelSize: 40))])
            #expect(result.cacheType == .disk && result.image.width == 40)
            #expect(result.decoded == DecodeInfo(width: 40, height: 40, shrunkOnLoad: true))
            #expect(f.server.hits("/image/original") == 1)
        }
    }
}
