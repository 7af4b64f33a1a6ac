import Foundation
import Testing

@testable import Osprey

@Suite("Encoding", .timeLimit(.minutes(5)))
struct EncodingTests {
    @Test("each encodable format round-trips with the right size", arguments: [ImageFormat.jpeg, .png, .webp, .gif, .avif])
    func roundTrip(format: ImageFormat) throws {
        guard format.canEncode else {
            #expect(throws: OspreyError.encoding(.unsupportedFormat(format))) { try TestData.image("hopper.png").encoded(as: format) }
            return
        }
        let image = try TestData.image("hopper.png")
        let data = try image.encoded(as: format, quality: 90)
        #expect(ImageFormat(sniffing: data) == format)
        let decoded = try Image(data: data)
        #expect((decoded.width, decoded.height) == (128, 128))
        let tolerance: Double = format == .gif ? 30 : 12
        #expect(Pixels.meanDifference(try decoded.rgbaPixels(), try image.rgbaPixels()) < tolerance)
    }

    @Test("lower quality makes smaller lossy files")
    func qualityMatters() throws {
        let image = try TestData.image("rocket.jpg")
        #expect(try image.encoded(as: .jpeg, quality: 30).count < image.encoded(as: .jpeg, quality: 95).count)
        #expect(try image.encoded(as: .webp, quality: 30).count < image.encoded(as: .webp, quality: 95).count)
        #expect(throws: OspreyError.encoding(.invalidQuality(0))) { try image.encoded(as: .jpeg, quality: 0) }
        #expect(throws: OspreyError.encoding(.invalidQuality(101))) { try image.encoded(as: .jpeg, quality: 101) }
    }

    @Test("animations survive GIF and WebP encoding; JPEG and PNG take the first frame")
    func animationsKept() throws {
        let image = try TestData.image("no_time_for_that_tiny.gif")
        for format in [ImageFormat.gif, .webp] {
            let decoded = try Image(data: try image.encoded(as: format))
            #expect(decoded.frameCount == 24, "\(format)")
            #expect(decoded.frameDelays == image.frameDelays, "\(format)")
        }
        for format in [ImageFormat.png, .jpeg] {
            let decoded = try Image(data: try image.encoded(as: format))
            #expect(decoded.frameCount == 1 && decoded.height == 25, "\(format)")
        }
    }

    @Test("JPEG flattens transparency onto white; PNG keeps alpha")
    func alphaHandling() throws {
        let image = try ImageProcessors.RoundCorner(radius: 40).process(try TestData.image("hopper.jpg"))
        #expect(try Pixels.pixel(image, x: 0, y: 0)[3] == 0, "the rounded corner is transparent")
        let jpeg = try Image(data: try image.encoded(as: .jpeg, quality: 95))
        #expect(!jpeg.hasAlpha)
        #expect(try Pixels.pixel(jpeg, x: 0, y: 0).prefix(3).allSatisfy { $0 > 240 })
        let png = try Image(data: try image.encoded(as: .png))
        #expect(png.hasAlpha)
        #expect(try Pixels.pixel(png, x: 0, y: 0)[3] == 0)
    }

    @Test("images made from RGBA pixels encode and read back")
    func fromPixels() throws {
        let pixels = (0..<(4 * 3 * 4)).map { UInt8($0 * 5) }
        let image = try Image(rgba: pixels, width: 4, height: 3)
        #expect(image.hasAlpha && image.format == nil)
        #expect(try image.rgbaPixels() == pixels)
        #expect(try Image(data: try image.encoded(as: .png)).rgbaPixels() == pixels)
        #expect(throws: OspreyError.self) { try Image(rgba: [1, 2, 3], width: 4, height: 3) }
    }

    @Test("format names and sniffing")
    func formats() {
        #expect(ImageFormat(name: "JPG") == .jpeg)
        #expect(ImageFormat(name: "tif") == .tiff)
        #expect(ImageFormat(name: "heic") == .heif)
        #expect(ImageFormat(name: "svg") == .svg && ImageFormat(name: "JXL") == .jxl && ImageFormat(name: "pdf") == .pdf)
        #expect(ImageFormat(name: "xyz") == nil)
        #expect(ImageFormat(sniffing: Data("BM".utf8) + Data(count: 40)) == .bmp)
        #expect(ImageFormat(sniffing: Data([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8])) == .tiff)
        let heic = Data([0, 0, 0, 24]) + Data("ftypheic".utf8) + Data([0, 0, 0, 0]) + Data("mif1heic".utf8)
        #expect(ImageFormat(sniffing: heic) == .heif)
        let avif = Data([0, 0, 0, 28]) + Data("ftypmif1".utf8) + Data([0, 0, 0, 0]) + Data("mif1avifmiaf".utf8)
        #expect(ImageFormat(sniffing: avif) == .avif)
        #expect(ImageFormat(sniffing: Data("GIF87a".utf8)) == .gif)
        #expect(ImageFormat(sniffing: Data([0xFF, 0xD8])) == nil)
    }

    #if canImport(Glibc)
        @Test("encoded data holds about its own size in memory, not libvips' larger write buffer", arguments: [ImageFormat.jpeg, .png, .webp, .gif])
        func encodedDataIsExact(format: ImageFormat) throws {
            // glibc's malloc_usable_size, which the Glibc module does not export.
            typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
            let symbol = try #require(dlsym(nil, "malloc_usable_size"))
            let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
            let image = try ImageProcessors.Resize(width: 32, height: 32).process(try TestData.image("hopper.png"))
            let data = try image.encoded(as: format, quality: 80)
            #expect(data.count < 8 << 10)
            let allocated = data.withUnsafeBytes { usableSize(UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
            // malloc rounds up to its chunk size; libvips' buffer starts at 16 KiB.
            #expect(allocated < data.count + 64)
        }
    #endif
}
