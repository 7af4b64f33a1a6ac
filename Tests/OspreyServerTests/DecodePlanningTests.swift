import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server decode planning for sizes that depend on the source", .serialized, .timeLimit(.minutes(3)))
struct DecodePlanningTests {
    @Test("a leading size-dependent resize becomes fixed steps for the source's size, a shrinking resize first")
    func planned() throws {
        var proportional = ResizeStep()
        proportional.width = 100
        let blur = ImageProcessors.Blur(sigma: 2)
        let steps = ImageService.planned([proportional, blur], sourceWidth: 400, sourceHeight: 300)
        let resize = try #require(steps.first as? ImageProcessors.Resize)
        #expect(resize.width == 100 && resize.height == 75 && resize.contentMode == .stretch)
        #expect(steps.count == 2 && steps.last?.identifier == blur.identifier)
        var aligned = ResizeStep()
        aligned.width = 300
        aligned.height = 200
        aligned.gravity = .topLeft
        aligned.flipHorizontally = true
        let cropped = ImageService.planned([aligned], sourceWidth: 400, sourceHeight: 300)
        #expect(cropped.count == 3)
        #expect((cropped[0] as? ImageProcessors.Resize).map { $0.width == 300 && $0.height == 225 } == true)
        #expect(cropped[1] is ImageProcessors.Crop && cropped[2] is ImageProcessors.Flip)
        // Anything else first is left as it is.
        #expect(ImageService.planned([blur, proportional], sourceWidth: 400, sourceHeight: 300).count == 2)
    }

    @Test("once the source is cached, one-sided, fit-in and gravity-placed sizes shrink on load, with the sizes the grammar defines")
    func shrinkOnLoad() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.make(width: 1600, height: 1200, alpha: false, format: .jpeg))
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        // The first request downloads the source (a fixed size: folded); later ones know its size.
        #expect(try await server.get("/unsafe/800x600/\(src)").image?.width == 800)
        let cases: [(String, Int, Int)] = [("100x0", 100, 75), ("fit-in/200x0", 200, 150), ("300x200/left/top", 300, 200), ("0x60", 80, 60)]
        for (geometry, width, height) in cases {
            let reply = try await server.get("/unsafe/\(geometry)/\(src)")
            let image = try #require(reply.image, "\(geometry): \(reply.text)")
            #expect(image.width == width && image.height == height, "\(geometry): \(image.width)x\(image.height)")
        }
        let metrics = try await server.get("/metrics").text
        #expect(
            metrics.contains("osprey_decodes_total{shrunk_on_load=\"true\"} 5"), "\(metrics.split(separator: "\n").filter { $0.contains("decodes") })"
        )
        await server.stop()
        await origin.stop()
    }
}
