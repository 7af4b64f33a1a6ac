import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyServer

@Suite("Server animations: frames kept up to a bound, still formats take the first frame", .serialized, .timeLimit(.minutes(3)))
struct AnimationTests {
    /// iss634.gif: 245x245, 42 frames.
    static func origin() async throws -> LoopbackOrigin {
        let origin = try await LoopbackOrigin.start()
        origin.set("/iss.gif", body: try TestImages.shared("iss634.gif"), contentType: "image/gif")
        return origin
    }

    @Test("fit-in keeps every frame: GIF by default, WebP when accepted; a still format gets the first frame")
    func keepsFrames() async throws {
        let origin = try await Self.origin()
        let server = try await ServerHarness.start()
        let path = "/unsafe/fit-in/100x100/\(origin.address("/iss.gif"))"
        let gif = try await server.get(path)
        #expect(gif.status == 200, "\(gif.text)")
        let animated = try #require(gif.image)
        #expect(animated.format == .gif && animated.frameCount == 42)
        #expect(animated.width == 100 && animated.height == 100)
        let webp = try #require(try await server.get(path, headers: [("Accept", "image/webp,image/*")]).image)
        #expect(webp.format == .webp && webp.frameCount == 42 && webp.width == 100)
        var stills: [String: Image] = [:]
        for format in ["jpeg", "png"] {
            let still = try await server.get("/unsafe/fit-in/100x100/filters:format(\(format))/\(origin.address("/iss.gif"))")
            let image = try #require(still.image, "\(format): \(still.text)")
            #expect(image.format?.rawValue == format && image.frameCount == 1 && image.width == 100)
            stills[format] = image
        }
        // The first frame: closer to the source's first frame than to a later one.
        let source = try Image(data: try TestImages.shared("iss634.gif"))
        let fit = ImageProcessors.Resize(width: 100, height: 100, contentMode: .fit)
        let frame0 = try fit.process(try #require(source.frame(at: 0)))
        let frame20 = try fit.process(try #require(source.frame(at: 20)))
        let png = try #require(stills["png"])
        #expect(try meanDifference(png, frame0) < meanDifference(png, frame20))
        await server.stop()
        await origin.stop()
    }

    @Test("over --max-animation-frames: 422 with a reason (from the header, before any decode), unless a still format is asked for")
    func frameLimit() async throws {
        let origin = try await Self.origin()
        let server = try await ServerHarness.start { $0.maxAnimationFrames = 10 }
        let refused = try await server.get("/unsafe/fit-in/100x100/\(origin.address("/iss.gif"))")
        #expect(refused.status == 422)
        #expect(refused.text.contains("42 animation frames") && refused.text.contains("limit of 10"), "\(refused.text)")
        let still = try await server.get("/unsafe/fit-in/100x100/filters:format(jpeg)/\(origin.address("/iss.gif"))")
        #expect(still.status == 200 && still.image?.frameCount == 1)
        // Cached now: refused from its header, before any decode.
        let again = try await server.get("/unsafe/fit-in/90x90/\(origin.address("/iss.gif"))")
        #expect(again.status == 422 && again.text.contains("42 animation frames"))
        #expect(origin.hits("/iss.gif") == 1, "one download for all")
        let metrics = try await server.get("/metrics").text
        #expect(
            metrics.contains("osprey_decodes_total{shrunk_on_load=\"true\"} 1")
                && metrics.contains("osprey_decodes_total{shrunk_on_load=\"false\"} 0"),
            "one decode (the first frame), none for the refusals from the header")
        await server.stop()
        await origin.stop()
    }

    @Test("after a still request downloaded the source, the next request reads its header: an animation over the limit is refused before decoding")
    func frameLimitAfterDownload() async throws {
        let origin = try await Self.origin()
        let server = try await ServerHarness.start { $0.maxAnimationFrames = 10 }
        let still = try await server.get("/unsafe/fit-in/100x100/filters:format(jpeg)/\(origin.address("/iss.gif"))")
        #expect(still.status == 200 && still.image?.frameCount == 1)
        // The disk holds the original (the data stage's); no processed image is kept in memory.
        let sources = server.server.service.sources
        let key = sources.pipeline.cacheKey(for: .url(try #require(URL(string: origin.address("/iss.gif")))))
        #expect(sources.cache.diskStorage.isCached(forKey: key))
        #expect(sources.cache.memoryStorage.totalCost == 0)
        let decodes = try await server.decodes()
        let refused = try await server.get("/unsafe/fit-in/90x90/\(origin.address("/iss.gif"))")
        #expect(refused.status == 422 && refused.text.contains("42 animation frames"), "\(refused.text)")
        #expect(try await server.decodes() == decodes, "refused before any decode")
        #expect(origin.hits("/iss.gif") == 1, "one download")
        await server.stop()
        await origin.stop()
    }

    @Test("frames count towards the source-pixel limit; the first frame alone fits it")
    func pixelLimit() async throws {
        let origin = try await Self.origin()
        // 245 x 245 x 42 = 2.5 MP over the limit; one frame, 60 kP, under it.
        let server = try await ServerHarness.start { $0.maxSourcePixels = 1_000_000 }
        let refused = try await server.get("/unsafe/fit-in/100x100/\(origin.address("/iss.gif"))")
        #expect(refused.status == 422, "\(refused.text)")
        let still = try await server.get("/unsafe/fit-in/100x100/filters:format(png)/\(origin.address("/iss.gif"))")
        #expect(still.status == 200 && still.image?.frameCount == 1)
        await server.stop()
        await origin.stop()
    }

    /// Mean absolute difference of two same-size images' RGBA bytes.
    private func meanDifference(_ a: Image, _ b: Image) throws -> Double {
        let pa = try a.rgbaPixels(), pb = try b.rgbaPixels()
        guard pa.count == pb.count, !pa.isEmpty else { return .infinity }
        var total = 0
        for index in pa.indices { total += abs(Int(pa[index]) - Int(pb[index])) }
        return Double(total) / Double(pa.count)
    }
}
