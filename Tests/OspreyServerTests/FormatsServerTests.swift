import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

/// JPEG XL out of the proxy (negotiated from `Accept`, named by imgproxy's `f:jxl`/`@jxl` and
/// thumbor's `format(jxl)`), and SVG and PDF sources drawn at the size the URL asks for.
@Suite("Server formats: JPEG XL out, SVG and PDF in", .serialized, .timeLimit(.minutes(5)))
struct FormatsServerTests {
    @Test("image/jxl is negotiated like AVIF and WebP, and named by f:jxl, @jxl and format(jxl)")
    func jxlOut() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let source = origin.address("/photo.jpg")
        let negotiated = try await server.get("/unsafe/100x100/\(source)", headers: [("Accept", "image/jxl,image/*;q=0.8")])
        #expect(negotiated.status == 200)
        #expect(negotiated.image?.format == .jxl)
        #expect(negotiated.header("Content-Type") == "image/jxl")
        #expect(negotiated.header("Vary") == "Accept")
        for path in [
            "/unsafe/100x100/filters:format(jxl)/\(source)", "/imgproxy/_/rs:fit:100:100/f:jxl/plain/\(source)",
            "/imgproxy/_/rs:fit:100:100/plain/\(source)@jxl"
        ] {
            let reply = try await server.get(path, headers: [("Accept", "image/webp")])
            #expect(reply.status == 200, "\(path)")
            #expect(reply.image?.format == .jxl, "\(path)")
            #expect(reply.header("Content-Type") == "image/jxl", "\(path)")
        }
        let bad = try await server.get("/unsafe/filters:format(svg)/\(source)")
        #expect(bad.status == 400)
        await server.stop()
        await origin.stop()
    }

    @Test("an SVG source is drawn at the requested size; raw never serves its bytes")
    func svgIn() async throws {
        let origin = try await LoopbackOrigin.start()
        let svg = try FixtureImages.formatData("drawing.svg")
        origin.set("/drawing.svg", body: svg, contentType: "image/svg+xml")
        origin.set("/drawing.pdf", body: try FixtureImages.formatData("drawing.pdf"), contentType: "application/pdf")
        let server = try await ServerHarness.start()
        let drawn = try await server.get("/imgproxy/_/rs:fit:480:480:1/plain/\(origin.address("/drawing.svg"))@png")
        #expect(drawn.status == 200)
        let image = try #require(drawn.image)
        #expect((image.format, image.width, image.height) == (.png, 480, 360))
        let page = try await server.get("/unsafe/180x0/\(origin.address("/drawing.pdf"))")
        #expect(page.status == 200)
        let drawnPage = try #require(page.image)
        #expect(drawnPage.width == 180 && (135...136).contains(drawnPage.height), "\(drawnPage.width)x\(drawnPage.height)")
        let raw = try await server.get("/imgproxy/_/raw:1/plain/\(origin.address("/drawing.svg"))")
        #expect(raw.status == 200)
        #expect(raw.body != svg && raw.header("Content-Type") != "image/svg+xml", "an SVG is always rasterised")
        await server.stop()
        await origin.stop()
    }
}
