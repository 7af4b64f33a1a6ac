import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("JPEG encoding with libjpeg on the calling thread", .timeLimit(.minutes(5)))
struct JPEGEncodingTests {
    @Test(
        "the bytes are the ones libvips' jpegsave writes with strip, for the same pixels and quality",
        arguments: [("rocket.jpg", 80), ("chelsea.png", 80), ("hopper.png", 95), ("hopper.png", 1), ("camera.png", 80)])
    func sameBytesAsLibvips(name: String, quality: Int) throws {
        let image = try TestData.image(name)
        let ours = try image.encoded(as: .jpeg, quality: quality)
        #expect(try Self.libvipsJPEG(image.storage, quality: quality) == ours)
    }

    @Test("one-band greyscale stays one band, with libvips' bytes")
    func greyscale() throws {
        let rgb = try TestData.image("camera.png")
        let grey = try rgb.storage.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }.materialised()
        let image = Image(storage: grey, frameHeight: rgb.height, format: nil, frameDelays: [], loopCount: 0, orientation: .up)
        let data = try image.encoded(as: .jpeg, quality: 80)
        #expect(try Self.libvipsJPEG(grey, quality: 80) == data)
        let decoded = try Image(data: data)
        #expect((decoded.width, decoded.height) == (512, 512))
        #expect(Pixels.meanDifference(try decoded.rgbaPixels(), try rgb.rgbaPixels()) < 6)
    }

    @Test("pixels not yet rendered (a flatten of transparent corners) are rendered and encoded")
    func lazyPixels() throws {
        let rounded = try ImageProcessors.RoundCorner(radius: 40).process(try TestData.image("hopper.jpg"))
        let decoded = try Image(data: try rounded.encoded(as: .jpeg, quality: 90))
        #expect((decoded.width, decoded.height, decoded.hasAlpha) == (128, 128, false))
        let corner = try Pixels.pixel(decoded, x: 0, y: 0)
        #expect(corner[0] > 245 && corner[1] > 245 && corner[2] > 245, "flattened onto white")
    }

    @Test("a frame of an animation encodes the first frame only")
    func firstFrame() throws {
        let animated = try TestData.image("iss634.gif")
        try #require(animated.isAnimated)
        let decoded = try Image(data: try animated.encoded(as: .jpeg, quality: 80))
        #expect((decoded.width, decoded.height) == (animated.width, animated.height))
    }

    /// vips_jpegsave_buffer's output for `image`.
    static func libvipsJPEG(_ image: VipsImageRef, quality: Int) throws -> Data {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        #expect(osprey_jpegsave(image.pointer, Int32(quality), &buffer, &length) == 0)
        defer { g_free(buffer) }
        return Data(bytes: try #require(buffer), count: length)
    }
}
