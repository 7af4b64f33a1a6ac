import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("Decoding", .timeLimit(.minutes(5)))
struct DecodingTests {
    /// name → (format, width, height, frames) as the files declare them.
    static let expectations: [String: (ImageFormat, Int, Int, Int)] = [
        "astronaut.png": (.png, 512, 512, 1),
        "camera.png": (.png, 512, 512, 1),
        "chelsea.png": (.png, 451, 300, 1),
        "coffee.png": (.png, 600, 400, 1),
        "hopper.avif": (.avif, 128, 128, 1),
        "hopper.gif": (.gif, 128, 128, 1),
        "hopper.jpg": (.jpeg, 128, 128, 1),
        "hopper.png": (.png, 128, 128, 1),
        "hopper.webp": (.webp, 128, 128, 1),
        "hopper_orientation_3.jpg": (.jpeg, 128, 128, 1),
        "hopper_orientation_6.jpg": (.jpeg, 128, 128, 1),
        "hopper_orientation_8.webp": (.webp, 128, 128, 1),
        "hubble_deep_field.jpg": (.jpeg, 1000, 872, 1),
        "iss634.gif": (.gif, 245, 245, 42),
        "logo.png": (.png, 500, 500, 1),
        "motorcycle_left.png": (.png, 741, 500, 1),
        "no_time_for_that_tiny.gif": (.gif, 14, 25, 24),
        "pil_sample_cmyk.jpg": (.jpeg, 100, 100, 1),
        "retina.jpg": (.jpeg, 1411, 1411, 1),
        "rocket.jpg": (.jpeg, 640, 427, 1),
        "text.png": (.png, 448, 172, 1)
    ]

    @Test("every test image decodes with its format, size and frame count", arguments: expectations.keys.sorted())
    func decodesEveryImage(name: String) throws {
        let (format, width, height, frames) = try #require(Self.expectations[name])
        let data = try TestData.data(name)
        #expect(ImageFormat(sniffing: data) == format)
        let image = try Image(data: data)
        #expect(image.format == format)
        #expect(image.width == width)
        #expect(image.height == height)
        #expect(image.frameCount == frames)
        #expect(image.cost == width * height * frames * (image.hasAlpha ? 4 : 3))
        #expect(try image.rgbaPixels().count == width * height * frames * 4)
        let header = try ImageDecoder().header(of: data)
        #expect(header.format == format && header.width == width && header.height == height && header.frameCount == frames)
    }

    @Test("a decoded image holds its pixels in memory")
    func decodedImageIsMaterialised() throws {
        for name in ["hopper.jpg", "iss634.gif", "logo.png", "hopper.avif"] {
            #expect(try TestData.image(name).storage.isMaterialised, "\(name)")
            #expect(try TestData.image(name, options: .init(thumbnail: .init(maxPixelSize: 50))).storage.isMaterialised, "\(name)")
        }
    }

    @Test(
        "EXIF orientations decode upright, matching hopper.jpg",
        arguments: ["hopper_orientation_3.jpg", "hopper_orientation_6.jpg", "hopper_orientation_8.webp"])
    func autoOrientation(name: String) throws {
        let reference = try TestData.image("hopper.jpg").rgbaPixels()
        let oriented = try TestData.image(name)
        #expect(oriented.orientation != .up)
        #expect(Pixels.meanDifference(try oriented.rgbaPixels(), reference) < 8)
        // Without auto-orientation the stored pixels are rotated, so they differ a lot.
        let raw = try TestData.image(name, options: .init(autoOrient: false))
        #expect(Pixels.meanDifference(try raw.rgbaPixels(), reference) > 20)
    }

    @Test("a CMYK JPEG comes out as sRGB")
    func cmykBecomesSRGB() throws {
        let image = try TestData.image("pil_sample_cmyk.jpg")
        #expect(image.storage.bands == 3)
        #expect(!image.hasAlpha)
        // Read as if it were RGB, the inverted CMYK data would average about 210 per channel.
        let means = Pixels.channelMeans(try image.rgbaPixels())
        #expect(means[0] < 100 && means[1] < 100 && means[2] < 100)
        #expect(means[0] > means[1], "the red lettering should make red dominate")
    }

    @Test("cached lcms2 transforms give libvips' own colours: Adobe RGB and CMYK, full size and thumbnail")
    func cachedColourTransforms() throws {
        // The reference: libvips' uncached conversion of the same file.
        func reference(_ name: String) throws -> [UInt8] {
            let data = try TestData.data(name)
            let converted: VipsImageRef = try data.withUnsafeBytes { buffer in
                let loaded = try VipsImageRef.make { osprey_load_buffer(buffer.baseAddress, buffer.count, "", &$0) }
                return try loaded.interpretation == VIPS_INTERPRETATION_CMYK
                    ? loaded.apply { osprey_colourspace($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
                    : loaded.apply { osprey_icc_to_srgb($0, &$1) }
            }
            let image = Image(
                storage: try converted.materialised(), frameHeight: converted.height, format: nil,
                frameDelays: [], loopCount: 0, orientation: .up)
            return try image.rgbaPixels()
        }
        for name in ["rocket.jpg", "pil_sample_cmyk.jpg"] {
            let expected = try reference(name)
            // Twice: the second decode uses the cached transform.
            for _ in 0..<2 {
                let decoded = try TestData.image(name)
                #expect(decoded.storage.bands == 3)
                #expect(!decoded.storage.has("icc-profile-data"), "the pixels are sRGB; the source profile is dropped")
                #expect(Pixels.meanDifference(try decoded.rgbaPixels(), expected) < 2, "\(name) full size")
            }
            let thumbnail = try TestData.image(name, options: .init(thumbnail: .init(maxPixelSize: 50)))
            #expect(max(thumbnail.width, thumbnail.height) == 50)
            let means = Pixels.channelMeans(try thumbnail.rgbaPixels()), expectedMeans = Pixels.channelMeans(expected)
            for channel in 0..<3 {
                #expect(abs(means[channel] - expectedMeans[channel]) < 3, "\(name) thumbnail, channel \(channel)")
            }
        }
    }

    @Test("animated GIFs keep their frames, delays and loop")
    func animatedFrames() throws {
        let image = try TestData.image("iss634.gif")
        #expect(image.isAnimated)
        #expect(image.frameDelays.count == 42)
        #expect(image.frameDelays.allSatisfy { $0 > 0 })
        #expect(image.frame(at: 41)?.height == 245)
        #expect(image.frame(at: 42) == nil)
        let first = try TestData.image("iss634.gif", options: .init(firstFrameOnly: true))
        #expect(first.frameCount == 1)
        #expect(first.frameDelays.isEmpty)
    }

    @Test("thumbnail-on-decode fits the box and keeps the aspect ratio")
    func thumbnailDecode() throws {
        let retina = try TestData.image("retina.jpg", options: .init(thumbnail: .init(maxPixelSize: 256)))
        #expect((retina.width, retina.height) == (256, 256))
        let rocket = try TestData.image("rocket.jpg", options: .init(thumbnail: .init(maxPixelSize: 100)))
        #expect(rocket.width == 100)
        #expect(abs(rocket.height - 67) <= 1)
        let box = try TestData.image("hubble_deep_field.jpg", options: .init(thumbnail: .init(width: 300, height: 100)))
        #expect(box.height == 100 && box.width <= 300)
        let stretched = try TestData.image("rocket.jpg", options: .init(thumbnail: .init(width: 50, height: 80, preserveAspectRatio: false)))
        #expect((stretched.width, stretched.height) == (50, 80))
        // A thumbnail never upscales when preserving the aspect ratio.
        let small = try TestData.image("hopper.jpg", options: .init(thumbnail: .init(maxPixelSize: 1000)))
        #expect((small.width, small.height) == (128, 128))
        // Animations keep every frame.
        let animated = try TestData.image("iss634.gif", options: .init(thumbnail: .init(maxPixelSize: 64)))
        #expect((animated.width, animated.height, animated.frameCount) == (64, 64, 42))
        // Orientation is applied before fitting: a 6-oriented image comes out upright.
        let oriented = try TestData.image("hopper_orientation_6.jpg", options: .init(thumbnail: .init(maxPixelSize: 64)))
        let reference = try TestData.image("hopper.jpg", options: .init(thumbnail: .init(maxPixelSize: 64)))
        #expect(Pixels.meanDifference(try oriented.rgbaPixels(), try reference.rgbaPixels()) < 10)
    }

    @Test("scale-down-large-images keeps the decoded bytes under the limit")
    func scaleDown() throws {
        let limit = 1024 * 1024
        let image = try TestData.image("retina.jpg", options: .init(scaleDownLimitBytes: limit))
        #expect(image.width * image.height * 4 <= limit)
        #expect(image.width >= 500, "the largest size under the limit (512 for 1411²), not a much smaller one")
        #expect(image.width == image.height)
        // Under the limit already: untouched.
        let untouched = try TestData.image("hopper.jpg", options: .init(scaleDownLimitBytes: DecodingOptions.defaultScaleDownLimitBytes))
        #expect(untouched.width == 128)
        // Animations share the limit among frames.
        let animated = try TestData.image("iss634.gif", options: .init(scaleDownLimitBytes: 42 * 100 * 100 * 4))
        #expect(animated.frameCount == 42)
        #expect(animated.width <= 100 && animated.height <= 100)
    }

    /// A 24-bit bottom-up BMP of `width` x `height` from RGB triples, row by row from the top.
    static func bmp(width: Int, height: Int, rgb: [UInt8]) -> Data {
        let rowBytes = (width * 3 + 3) / 4 * 4
        let imageSize = rowBytes * height
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        var bytes: [UInt8] = Array("BM".utf8) + le32(54 + imageSize) + le32(0) + le32(54)
        bytes += le32(40) + le32(width) + le32(height) + le16(1) + le16(24) + le32(0) + le32(imageSize) + le32(2835) + le32(2835) + le32(0) + le32(0)
        for row in (0..<height).reversed() {
            var line: [UInt8] = []
            for column in 0..<width {
                let i = (row * width + column) * 3
                line += [rgb[i + 2], rgb[i + 1], rgb[i]]
            }
            bytes += line + [UInt8](repeating: 0, count: rowBytes - line.count)
        }
        return Data(bytes)
    }

    @Test("BMP decodes through libvips' ImageMagick loader when this build has it")
    func bmpDecodes() throws {
        let rgb: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 128, 128, 128]
        let data = Self.bmp(width: 3, height: 2, rgb: rgb)
        #expect(ImageFormat(sniffing: data) == .bmp)
        guard ImageFormat.bmp.hasLoader else {
            #expect(throws: OspreyError.decoding(.noDecoder(format: .bmp))) { try Image(data: data) }
            return
        }
        let image = try Image(data: data)
        #expect((image.width, image.height, image.format) == (3, 2, .bmp))
        #expect(try Pixels.pixel(image, x: 0, y: 0) == [255, 0, 0, 255])
        #expect(try Pixels.pixel(image, x: 2, y: 1) == [128, 128, 128, 255])
    }

    @Test("TIFF decodes")
    func tiffDecodes() throws {
        let data = BadInputTests.tiff(width: 3, height: 2, grey: [0, 50, 100, 150, 200, 250])
        #expect(ImageFormat(sniffing: data) == .tiff)
        let image = try Image(data: data)
        #expect((image.width, image.height, image.format) == (3, 2, .tiff))
        #expect(try Pixels.pixel(image, x: 1, y: 1) == [200, 200, 200, 255])
    }
}
