import Foundation
import Testing

@testable import Osprey

@Suite("Placeholder", .timeLimit(.minutes(5)))
struct PlaceholderTests {
    @Test("a ThumbHash placeholder decodes to the requested box, keeping its own aspect ratio")
    func thumbHash() async throws {
        let hash = try ThumbHash(imageData: try TestData.data("chelsea.png"))
        let fit = try await Placeholder.thumbHash(hash.string).image(width: 320, height: 320)
        let (width, height) = hash.decodedSize
        #expect(fit.width == 320 && abs(fit.height - 320 * height / width) <= 1, "\(fit.width)x\(fit.height)")
        let fill = try await Placeholder.thumbHash(hash.string).image(width: 100, height: 300, contentMode: .fill)
        #expect((fill.width, fill.height) == (100, 300))
        let small = try hash.image()
        let scaledDown = try Placeholder.thumbHash(hash.string).decoded(width: width, height: height)
        #expect(try scaledDown.rgbaPixels() == small.rgbaPixels(), "at its own size the hash's pixels come back as they are")
    }

    @Test("a BlurHash placeholder takes the aspect ratio it is given")
    func blurHash() async throws {
        let placeholder = Placeholder.blurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj", width: 451, height: 300)
        let image = try await placeholder.image(width: 200, height: 200)
        #expect(image.width == 200 && abs(image.height - 133) <= 1, "\(image.width)x\(image.height)")
        #expect(!(try image.rgbaPixels()).isEmpty)
        let punchy = try await Placeholder.blurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj", width: 1, height: 2, punch: 2).image(width: 50, height: 50)
        #expect(punchy.width == 25 && punchy.height == 50)
    }

    @Test("an image placeholder is scaled to the box")
    func image() async throws {
        let placeholder = Placeholder.image(try TestData.image("hopper.jpg"))
        let image = try await placeholder.image(width: 64, height: 64)
        #expect((image.width, image.height) == (64, 64))
    }

    @Test("bad hashes and sizes are typed errors")
    func errors() async throws {
        await #expect(throws: OspreyError.self) { try await Placeholder.thumbHash("not a hash").image(width: 10, height: 10) }
        do {
            _ = try await Placeholder.blurHash("LEHV6", width: 4, height: 3).image(width: 10, height: 10)
            Issue.record("a short BlurHash was accepted")
        } catch {
            #expect(PlaceholderPixels.isInvalidHash(error, algorithm: "BlurHash"))
        }
        for (width, height) in [(0, 10), (10, Placeholder.maxSide + 1)] {
            do {
                _ = try Placeholder.thumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j2w").decoded(width: width, height: height)
                Issue.record("\(width)x\(height) was accepted")
            } catch {
                #expect(PlaceholderPixels.isInvalidArgument(error), "\(error)")
            }
        }
        #expect(throws: OspreyError.self) {
            try Placeholder.blurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj", width: 0, height: 3).decoded(width: 9, height: 9)
        }
    }
}
