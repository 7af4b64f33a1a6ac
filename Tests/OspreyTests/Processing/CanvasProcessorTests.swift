import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// Processors that draw the image onto a larger canvas or draw another image onto it: what the
/// canvas is made of and where things land. The inputs are made from RGBA bytes, which are tagged
/// sRGB (they were left untagged once, and padding or compositing them failed).
@Suite("Canvas processors: backdrop, pad by gravity, repeated watermark", .timeLimit(.minutes(2)))
struct CanvasProcessorTests {
    /// A `width` x `height` image: left half `left`, right half `right` (RGB).
    static func halves(width: Int, height: Int, left: (UInt8, UInt8, UInt8), right: (UInt8, UInt8, UInt8), alpha: UInt8 = 255) throws -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let c = x < width / 2 ? left : right
                (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = (c.0, c.1, c.2, alpha)
            }
        }
        return try Image(rgba: pixels, width: width, height: height)
    }

    static func pixel(_ image: Image, _ x: Int, _ y: Int) throws -> [UInt8] {
        let rgba = try image.rgbaPixels()
        let i = (y * image.width + x) * 4
        return Array(rgba[i..<(i + 4)])
    }

    @Test func blurredBackdropFillsTheCanvasWithTheImageItself() throws {
        // Mostly red with a little blue: the bands beside the image are reddish, not a fixed colour.
        let image = try Self.halves(width: 100, height: 50, left: (250, 0, 0), right: (240, 10, 10))
        let out = try ImageProcessors.Backdrop(width: 100, height: 100, style: .blurred(sigma: 5)).process(image)
        #expect(out.width == 100 && out.height == 100)
        let band = try Self.pixel(out, 10, 5)
        #expect(band[0] > 200 && band[2] < 40, "\(band)")
        // The image itself is unchanged in the middle.
        #expect(try Self.pixel(out, 10, 50)[0...2] == [250, 0, 0])
        #expect(ImageProcessors.Backdrop(width: 100, height: 100).identifier == "backdrop:100x100:blur:50")
    }

    @Test func medianBackdropUsesTheMedianColour() throws {
        // Three quarters green, one quarter white: the median of each channel is green's.
        var pixels = [UInt8](repeating: 0, count: 80 * 40 * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let x = (i / 4) % 80
            (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]) = x < 60 ? (0, 200, 0, 255) : (255, 255, 255, 255)
        }
        let image = try Image(rgba: pixels, width: 80, height: 40)
        let out = try ImageProcessors.Backdrop(width: 80, height: 80, style: .medianColor).process(image)
        #expect(out.width == 80 && out.height == 80)
        #expect(try Self.pixel(out, 70, 2)[0...2] == [0, 200, 0])
        #expect(ImageProcessors.Backdrop(width: 80, height: 80, style: .medianColor).identifier == "backdrop:80x80:median")
        // Already as large as the canvas: unchanged.
        #expect(try ImageProcessors.Backdrop(width: 10, height: 10).process(image).width == 80)
    }

    @Test func aRepeatedWatermarkIsTiledAlongItsAxis() throws {
        let base = try Self.halves(width: 200, height: 100, left: (0, 0, 0), right: (0, 0, 0))
        let mark = try Self.halves(width: 30, height: 20, left: (255, 255, 255), right: (255, 255, 255))
        let across = try ImageProcessors.Watermark(mark: mark, name: "m", x: .repeat, y: .pixels(0)).process(base)
        // Tiles reach the far right of the top band; below the band nothing is drawn.
        #expect(try Self.pixel(across, 195, 5)[0] == 255)
        #expect(try Self.pixel(across, 195, 50)[0] == 0)
        let both = try ImageProcessors.Watermark(mark: mark, name: "m", x: .repeat, y: .repeat).process(base)
        #expect(try Self.pixel(both, 195, 95)[0] == 255)
        #expect(ImageProcessors.Watermark(mark: mark, name: "m", x: .repeat, y: .center).identifier == "watermark:m:repeat:center:0:none:none")
    }

    @Test func padPlacesTheImageByGravityAndAddsAlphaOnlyWhereTheCanvasGrows() throws {
        let image = try Self.halves(width: 40, height: 20, left: (250, 0, 0), right: (0, 0, 250))
        // On a 40x60 transparent canvas at the top: opaque image above, transparent below.
        let top = try ImageProcessors.Pad(width: 40, height: 60, background: .clear, gravity: .top).process(image)
        #expect(top.width == 40 && top.height == 60 && top.hasAlpha)
        #expect(try Self.pixel(top, 5, 5) == [250, 0, 0, 255])
        #expect(try Self.pixel(top, 5, 50)[3] == 0)
        let bottomRight = try ImageProcessors.Pad(width: 60, height: 40, background: .white, gravity: .bottomRight).process(image)
        #expect(try Self.pixel(bottomRight, 59, 39)[0...2] == [0, 0, 250])
        #expect(try Self.pixel(bottomRight, 0, 0)[0...2] == [255, 255, 255])
        // Centred by default, with the identifier it always had.
        let centred = try ImageProcessors.Pad(width: 40, height: 60, background: .white).process(image)
        #expect(try Self.pixel(centred, 5, 30)[0...2] == [250, 0, 0] && (try Self.pixel(centred, 5, 5))[0...2] == [255, 255, 255])
        #expect(ImageProcessors.Pad(width: 40, height: 60).identifier == "pad:40x60:ffffff")
        #expect(ImageProcessors.Pad(width: 40, height: 60, gravity: .top).identifier == "pad:40x60:ffffff:top")
        // A transparent canvas no larger than the image changes nothing: no alpha band appears.
        let opaque = try ImageProcessors.Pad(background: .white).process(image)
        #expect(!opaque.hasAlpha)
        let same = try ImageProcessors.Pad(width: 40, height: 20, background: .clear).process(opaque)
        #expect(!same.hasAlpha && same.width == 40 && same.height == 20)
    }

    @Test func aNinePatchLayoutComesFromItsBorderMarks() throws {
        let layout = try #require(ImageProcessors.NinePatch.Layout(rgba: NinePatchFixture.rgba, width: 12, height: 12))
        #expect(layout.columns.map(\.length) == [4, 2, 4] && layout.columns.map(\.stretchy) == [false, true, false])
        #expect(layout.rows == layout.columns)
        #expect(layout.padding == (2, 2, 2, 2))
        #expect(ImageProcessors.NinePatch.Layout.sizes(layout.columns, total: 44) == [4, 36, 4])
        // No stretchable mark: not a nine-patch, refused when it runs.
        #expect(ImageProcessors.NinePatch.Layout(rgba: [UInt8](repeating: 255, count: 12 * 12 * 4), width: 12, height: 12) == nil)
        let white = try Image(rgba: [UInt8](repeating: 255, count: 12 * 12 * 4), width: 12, height: 12)
        #expect(throws: OspreyError.self) { try ImageProcessors.NinePatch(patch: white, name: "white").process(white) }
        // An animation keeps its frames, each framed.
        let animated = try TestData.image("no_time_for_that_tiny.gif")
        let patch = try Image(rgba: NinePatchFixture.rgba, width: 12, height: 12)
        let framed = try ImageProcessors.NinePatch(patch: patch, name: "ring").process(animated)
        #expect(framed.frameCount == animated.frameCount && framed.width == animated.width + 4 && framed.height == animated.height + 4)
    }
}
