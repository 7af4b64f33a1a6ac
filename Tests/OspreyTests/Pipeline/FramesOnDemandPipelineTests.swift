import Foundation
import Testing

@testable import Osprey

/// ``ResolvedOptions/animationFramesOnDemand``: an animation delivered as its first frame and a
/// frame decoder, never cached as the image of the request.
@Suite("Animation frames on demand through the pipeline", .timeLimit(.minutes(3)))
struct FramesOnDemandPipelineTests {
    /// iss634.gif (42 frames of 245×245) and the same animation as a WebP.
    static func animations() throws -> [(String, Data)] {
        let gif = try TestData.data("iss634.gif")
        return [("gif", gif), ("webp", try Image(data: gif).encoded(as: .webp, quality: 80))]
    }

    /// The URI serving body `name` in one piece.
    static func uri(_ name: String) -> String { "/slow/\(name)?chunk=4194304&pause=0" }

    @Test(
        "an animated GIF or WebP comes as its first frame and a decoder, uncached; a plain request then gets every frame",
        arguments: ["gif", "webp"])
    func firstFrameAndDecoder(format: String) async throws {
        let animations = try Self.animations()
        let data = try #require(animations.first { $0.0 == format }?.1)
        try await PipelineFixture.run { f in
            f.server.setBody(format, data)
            let source = f.source(Self.uri(format))
            let result = try await f.pipeline.image(for: source, options: [.animationFramesOnDemand()])
            let decoder = try #require(result.frameDecoder)
            #expect(decoder.frameCount == 42 && decoder.format.rawValue == format)
            #expect(result.image.frameCount == 1 && (result.image.width, result.image.height) == (245, 245))
            #expect(try result.image.rgbaPixels() == decoder.frame(at: 0).rgbaPixels())
            #expect(try decoder.frame(at: 1).rgbaPixels() != result.image.rgbaPixels())
            #expect(f.decodes == 0, "no frame but the first was decoded")
            #expect(f.pipeline.cachedImage(for: source) == nil, "the first frame is not stored as the image of the request")
            await f.cache.diskStorage.waitForPendingWork()

            // Without the option: every frame, from the bytes the first request wrote to disk.
            let plain = try await f.pipeline.image(for: source)
            #expect(plain.frameDecoder == nil && plain.image.frameCount == 42)
            #expect(f.server.hits(Self.uri(format)) == 1, "the second request read the stored bytes")
            // A memory hit of the whole decode still answers a request with the option.
            let hit = try await f.pipeline.image(for: source, options: [.animationFramesOnDemand()])
            #expect(hit.cacheType == .memory && hit.frameDecoder == nil && hit.image.frameCount == 42)
        }
    }

    @Test("a downsample keeps frames on demand (full size); other processors, first-frame-only and still images decode as before")
    func fallbacks() async throws {
        let gif = try TestData.data("iss634.gif")
        try await PipelineFixture.run { f in
            f.server.setBody("iss", gif)
            let source = f.source(Self.uri("iss"))
            let downsample = ImageProcessors.Downsample(maxPixelSize: 100)
            let sized = try await f.pipeline.image(for: source, options: [.animationFramesOnDemand(), .processor(downsample)])
            #expect(sized.frameDecoder?.frameCount == 42 && sized.image.width == 245)
            #expect(f.pipeline.cachedImage(for: source, options: [.processor(downsample)]) == nil)
            #expect(f.pipeline.cachedType(for: source, options: [.processor(downsample)]) == .none)

            let blurred = try await f.pipeline.image(
                for: source, options: [.animationFramesOnDemand(), .processor(ImageProcessors.Blur(sigma: 1))])
            #expect(blurred.frameDecoder == nil && blurred.image.frameCount == 42)
            let first = try await f.pipeline.image(for: source, options: [.animationFramesOnDemand(), .onlyLoadFirstFrame, .cachePolicy(.reload)])
            #expect(first.frameDecoder == nil && first.image.frameCount == 1)
            let off = try await f.pipeline.image(
                for: source, options: [.animationFramesOnDemand(), .animationFramesOnDemand(false), .cachePolicy(.reload)])
            #expect(off.frameDecoder == nil && off.image.frameCount == 42)

            let still = try await f.pipeline.image(for: f.source("/image/still"), options: [.animationFramesOnDemand()])
            #expect(still.frameDecoder == nil && still.image.format == .jpeg)
        }
    }

    @Test("requests with and without the option at once each get their own kind of result")
    func sharedFetchSeparateResults() async throws {
        let gif = try TestData.data("iss634.gif")
        try await PipelineFixture.run { f in
            f.server.setBody("both", gif)
            let source = f.source(Self.uri("both"))
            async let onDemand = f.pipeline.image(for: source, options: [.animationFramesOnDemand()])
            async let whole = f.pipeline.image(for: source)
            let (a, b) = try await (onDemand, whole)
            #expect(b.frameDecoder == nil && b.image.frameCount == 42)
            #expect(a.image.frameCount == 42 || a.frameDecoder?.frameCount == 42)
        }
    }

    @Test("bad bytes in an animated format give a typed decoding error")
    func badBytes() async throws {
        let gif = try TestData.data("iss634.gif")
        var garbage = Data("GIF89a".utf8)
        garbage.append(Data(repeating: 0xA5, count: 64))
        try await PipelineFixture.run { f in
            for (name, body) in [("garbage", garbage), ("cut", gif.prefix(gif.count / 2))] {
                f.server.setBody(name, body)
                do throws(OspreyError) {
                    _ = try await f.pipeline.image(for: f.source(Self.uri(name)), options: [.animationFramesOnDemand()])
                    Issue.record("\(name): no error")
                } catch {
                    if case .decoding = error { continue }
                    Issue.record("\(name): \(error) is not a decoding error")
                }
            }
        }
    }
}
