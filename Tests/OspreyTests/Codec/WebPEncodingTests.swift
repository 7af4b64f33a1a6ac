import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("WebP encoding of still images", .timeLimit(.minutes(5)))
struct WebPEncodingTests {
    @Test("quality 80 gives lossy VP8 of the image's size, with no metadata chunks")
    func lossyWithoutMetadata() throws {
        let image = try TestData.image("chelsea.png")
        #expect(image.storage.has("icc-profile-data") && image.storage.has("xmp-data"), "the source carries metadata")
        let data = try image.encoded(as: .webp, quality: 80)
        #expect(try Self.chunks(data).map(\.fourCC) == ["VP8 "])
        let decoded = try Image(data: data)
        #expect((decoded.width, decoded.height, decoded.hasAlpha) == (451, 300, false))
        #expect(Pixels.meanDifference(try decoded.rgbaPixels(), try image.rgbaPixels()) < 6)
    }

    @Test("the bitstream is the one libvips' webpsave writes for the same pixels and quality", arguments: ["rocket.jpg", "hopper.png"])
    func sameBitstreamAsLibvips(name: String) throws {
        let image = try TestData.image(name)
        let ours = try Self.chunks(try image.encoded(as: .webp, quality: 80))
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        #expect(osprey_webpsave(image.storage.pointer, 80, 0, &buffer, &length) == 0)
        let libvips = try Self.chunks(Data(bytes: try #require(buffer), count: length))
        g_free(buffer)
        let libvipsVP8 = try #require(libvips.first { $0.fourCC == "VP8 " })
        #expect(ours.count == 1 && ours[0].fourCC == "VP8 ")
        #expect(ours.first?.payload == libvipsVP8.payload)
    }

    @Test("quality 100 is lossless: VP8L with the exact pixels")
    func lossless() throws {
        let image = try TestData.image("hopper.png")
        let data = try image.encoded(as: .webp, quality: 100)
        #expect(try Self.chunks(data).map(\.fourCC) == ["VP8L"])
        #expect(try Image(data: data).rgbaPixels() == image.rgbaPixels())
    }

    @Test("transparency is kept in an alpha chunk")
    func alpha() throws {
        let image = try ImageProcessors.RoundCorner(radius: 40).process(try TestData.image("hopper.jpg"))
        let data = try image.encoded(as: .webp, quality: 80)
        #expect(try Self.chunks(data).map(\.fourCC) == ["VP8X", "ALPH", "VP8 "])
        let decoded = try Image(data: data)
        #expect(decoded.hasAlpha)
        #expect(try Pixels.pixel(decoded, x: 0, y: 0)[3] == 0)
        #expect(try Pixels.pixel(decoded, x: 64, y: 64)[3] == 255)
    }

    @Test("one-band greyscale images encode as RGB of the same size")
    func greyscale() throws {
        // Decoded images are RGB: this one is made one-band by hand, as the encoder takes any 8-bit storage.
        let rgb = try TestData.image("camera.png")
        let grey = try rgb.storage.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_B_W.rawValue), &$1) }.materialised()
        let image = Image(storage: grey, frameHeight: rgb.height, format: nil, frameDelays: [], loopCount: 0, orientation: .up)
        #expect(image.storage.bands == 1)
        let decoded = try Image(data: try image.encoded(as: .webp, quality: 80))
        #expect((decoded.width, decoded.height) == (512, 512))
        #expect(Pixels.meanDifference(try decoded.rgbaPixels(), try rgb.rgbaPixels()) < 6)
    }

    @Test("pixels that are not 8-bit still encode, through libvips' saver")
    func otherBandFormats() throws {
        let rgb = try TestData.image("hopper.png")
        let wide = try rgb.storage.apply { osprey_cast($0, Int32(VIPS_FORMAT_USHORT.rawValue), &$1) }.materialised()
        let image = Image(storage: wide, frameHeight: rgb.height, format: nil, frameDelays: [], loopCount: 0, orientation: .up)
        let decoded = try Image(data: try image.encoded(as: .webp, quality: 80))
        #expect((decoded.width, decoded.height) == (128, 128))
        #expect(Pixels.meanDifference(try decoded.rgbaPixels(), try rgb.rgbaPixels()) < 12)
    }

    /// The chunks of a RIFF WebP file, in order.
    static func chunks(_ data: Data) throws -> [(fourCC: String, payload: Data)] {
        let bytes = [UInt8](data)
        try #require(bytes.count >= 12 && bytes[0..<4].elementsEqual("RIFF".utf8) && bytes[8..<12].elementsEqual("WEBP".utf8))
        var chunks: [(String, Data)] = []
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = bytes[offset + 4..<offset + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            try #require(offset + 8 + size <= bytes.count, "chunk runs past the end")
            chunks.append((String(decoding: bytes[offset..<offset + 4], as: UTF8.self), Data(bytes[offset + 8..<offset + 8 + size])))
            offset += 8 + size + (size & 1)
        }
        return chunks
    }
}
