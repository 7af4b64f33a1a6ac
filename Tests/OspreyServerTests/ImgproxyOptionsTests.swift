import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

/// imgproxy's `z`, `mw`/`mh`, `exar`, `fl`, `pix`, `fq`, `fn` and `att`: the geometry computed for
/// a 400x300 source as imgproxy's `calcScale`/`calcSizes` do, then the answers over HTTP.
@Suite("imgproxy zoom, least sizes, aspect-ratio canvas, flip, pixelate, per-format quality, file name", .timeLimit(.minutes(3)))
struct ImgproxyOptionsTests {
    static func steps(_ options: String) throws -> [String] {
        try ImgproxyResizingTests.steps(options)
    }

    static func chain(_ options: String) throws -> [String] {
        try GeometryTests.imgproxy(options).processors.map(\.identifier)
    }

    @Test func zoomMultipliesTheScaleWithinEnlarge() throws {
        // An even zoom multiplies the box: still one planned downsample or fill.
        #expect(try Self.chain("rs:fit:200:200/z:0.5") == ["downsample:100x100"])
        #expect(try Self.chain("rs:fill:100:100:1/z:2") == ["resize:200x200:fill"])
        // Without enlarge, a zoom past the source stops at it, the box's shape kept.
        #expect(try Self.steps("rs:fill:100:100/z:2") == ["resize:267x200:stretch", "crop:200x200:center"])
        #expect(try Self.steps("rs:fill:100:100/z:2:1") == ["resize:267x100:stretch", "crop:200x100:center"])
        // Without a size: the source scaled, never enlarged without el.
        #expect(try Self.steps("z:0.5") == ["resize:200x150:stretch"])
        #expect(try Self.steps("z:2").isEmpty)
        #expect(try Self.steps("z:2/el:1") == ["resize:800x600:stretch"])
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("z:0") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("z:1:-1") }
    }

    @Test func leastSizesRaiseTheScaleOnBothAxes() throws {
        #expect(try Self.steps("rs:fit:100:100/mw:200") == ["resize:200x150:stretch"])
        #expect(try Self.steps("rs:fill:100:100/mh:150") == ["resize:200x150:stretch", "crop:100x100:center"])
        // Met already: nothing changes.
        #expect(try Self.steps("rs:fit:100:100/mw:50") == ["resize:100x75:stretch"])
        // Past the source, as imgproxy: the least size wins over enlarge (and the size check sees it).
        #expect(try Self.steps("w:100/mw:800") == ["resize:800x600:stretch"])
        #expect(ResultSize.mayExceed(try GeometryTests.imgproxy("mw:10").processors, limit: 16384))
        #expect(ResultSize.largest(try GeometryTests.imgproxy("w:100/mw:800").processors, width: 400, height: 300) == (800, 600))
    }

    @Test func extendAspectRatioPadsToTheBoxShapeOnly() throws {
        let clear = RGBAColor.clear.hex
        // Fitted to 133x100 in a 2:1 box: a 200x100 canvas.
        #expect(try Self.steps("rs:fit:200:100/exar:1") == ["resize:133x100:stretch", "pad:200x100:\(clear)"])
        #expect(try Self.steps("rs:fit:200:100/extend_aspect_ratio:1:we") == ["resize:133x100:stretch", "pad:200x100:\(clear):left"])
        // Too small for the box and not enlarged: the canvas has the box's shape, not its size.
        #expect(try Self.steps("rs:fit:1600:400/exar:1") == ["pad:1200x300:\(clear)"])
        // Extend makes the box itself; the aspect-ratio canvas then adds nothing.
        #expect(try Self.steps("rs:fit:200:200:0:1/exar:1") == ["resize:200x150:stretch", "pad:200x200:\(clear)"])
        #expect(try Self.steps("rs:fill:200:100/exar:1") == ["resize:200x150:stretch", "crop:200x100:center"])
    }

    @Test func flipsFollowTheRotationBeforeThePlacedCrop() throws {
        #expect(try Self.chain("rs:fit:100:100/fl:1") == ["downsample:100x100", "flip:h"])
        #expect(try Self.chain("rs:fit:100:50/rot:90/fl:1:1") == ["downsample:50x100", "rotate:90", "flip:hv"])
        // Placed by gravity: flipped first, then cropped where the gravity says in the flipped image.
        #expect(try Self.steps("rs:fill:100:50/g:no/fl:0:1") == ["flip:v", "resize:100x75:stretch", "crop:100x50:top"])
        #expect(try Self.chain("fl:0:0").isEmpty)
    }

    @Test func pixelateAndTheOutputOptionsReachTheJob() throws {
        #expect(try Self.chain("bl:2/pix:8") == ["blur:2", "pixelate:8"])
        #expect(try Self.chain("pix:1").isEmpty)
        #expect(try GeometryTests.imgproxy("fq:jpeg:30:webp:70").formatQuality == [.jpeg: 30, .webp: 70])
        #expect(try GeometryTests.imgproxy("fq:jpg:30/fq:jpg:0").formatQuality.isEmpty)
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("fq:jpeg") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("fq:nope:5") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("fq:png:101") }
        // The file name: the source's stem, or fn (plain, or base64 with its second argument).
        #expect(try GeometryTests.imgproxy("w:10").disposition == ImageJob.Disposition(stem: "a"))
        #expect(try GeometryTests.imgproxy("fn:my%20pic/att:1").disposition == ImageJob.Disposition(stem: "my pic", attachment: true))
        #expect(try GeometryTests.imgproxy("fn:bXlwaWM:1").disposition?.stem == "mypic")
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("fn:%%%:1") }
        #expect(ImageJob.Disposition(stem: "a\"b\u{7}é").value(for: .jpeg) == "inline; filename=\"a%22b%07%C3%A9.jpg\"")
        #expect(ImageJob.Disposition(stem: "x", attachment: true).value(for: .webp) == "attachment; filename=\"x.webp\"")
        // thumbor URLs send none.
        #expect(try GeometryTests.thumbor("100x100").disposition == nil)
    }

    @Test func cropsTakeFractionsOffsetsAndFocusPoints() throws {
        func crop(_ options: String) throws -> CropStep {
            try #require(try GeometryTests.imgproxy(options).processors.first as? CropStep, "\(options)")
        }
        // Fractions of the source's sides (400x300), centred.
        #expect(try crop("c:0.5:0.5").rectangle(width: 400, height: 300) == (100, 75, 200, 150))
        // Placed by gravity and moved away from its edge; centred on a point.
        #expect(try crop("c:200:100:no:10:20").rectangle(width: 400, height: 300) == (110, 20, 200, 100))
        #expect(try crop("c:100:100:fp:0.25:0.5").rectangle(width: 400, height: 300) == (50, 100, 100, 100))
        #expect(try crop("c:0:0.5:so").rectangle(width: 400, height: 300) == (0, 150, 400, 150))
        // Whole pixels placed by gravity alone stay a fixed crop; without its own gravity, g's.
        #expect(try Self.chain("c:200:100") == ["crop:200x100:center"])
        #expect(try Self.chain("g:we/c:100:100") == ["crop:100x100:left"])
        #expect(try crop("g:fp:0.25:0.5/c:100:100").rectangle(width: 400, height: 300) == (50, 100, 100, 100))
        // Offsets below 1 are fractions of the source's side: 0.1 x 400 = 40, 0.2 x 300 = 60.
        #expect(try crop("c:200:100:no:0.1:0.2").rectangle(width: 400, height: 300) == (140, 60, 200, 100))
        // The smart gravity: libvips' attention places it, in c or inherited from g.
        #expect(try crop("c:100:100:sm").smart && crop("c:100:100:sm").identifier == "imgproxy-crop:100x100:sm")
        #expect(try crop("g:sm/c:0.5:100").smart)
        #expect(try Self.chain("g:sm/c:100:100:ce") == ["crop:100x100:center"])
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("c:100:100:fp:2:0") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("c:-1:100") }
        // The size estimate follows the crop, then the resize of what it left.
        #expect(ResultSize.largest(try GeometryTests.imgproxy("c:0.5:0.5/rs:fit:1000:1000:1").processors, width: 400, height: 300) == (1000, 750))
    }

    @Test("over HTTP: pixelated blocks, flips, per-format quality, Content-Disposition on misses and memory hits")
    func overHTTP() async throws {
        // Left half red, right half blue.
        var pixels: [UInt8] = []
        for _ in 0..<30 {
            for x in 0..<40 { pixels += x < 20 ? [255, 0, 0, 255] : [0, 0, 255, 255] }
        }
        let halves = try Image(rgba: pixels, width: 40, height: 30).encoded(as: .png)
        let origin = try await LoopbackOrigin.start()
        origin.set("/halves.png", body: halves, contentType: "image/png")
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let src = origin.address("/halves.png")
        func rgba(_ path: String) async throws -> (Image, [UInt8]) {
            let reply = try await server.get(path)
            let image = try #require(reply.image, "\(path): \(reply.status) \(reply.text)")
            return (image, try image.rgbaPixels())
        }
        // Blocks of 16 from the top-left: the block over x 16..<32 averages red and blue.
        let (pixelated, blocks) = try await rgba("/imgproxy/_/pix:16/f:png/plain/\(src)")
        #expect(pixelated.width == 40 && pixelated.height == 30)
        #expect(blocks[0] == 255 && blocks[2] == 0)
        let mixed = Array(blocks[(16 * 4)..<(16 * 4 + 3)])
        #expect(mixed[0] > 40 && mixed[0] < 110 && mixed[2] > 145, "\(mixed)")
        #expect(blocks[(31 * 4)..<(31 * 4 + 3)] == blocks[(16 * 4)..<(16 * 4 + 3)])
        // The left half cropped as a fraction: all red.
        let (half, halfPixels) = try await rgba("/imgproxy/_/c:0.5:0:we/f:png/plain/\(src)")
        #expect(half.width == 20 && half.height == 30 && halfPixels[(19 * 4)] == 255 && halfPixels[(19 * 4) + 2] == 0)
        // A smart crop of 20x30 from a grey 80x30 with one red square (x 60..<70) keeps the square.
        var spot: [UInt8] = []
        for y in 0..<30 {
            for x in 0..<80 { spot += (60..<70).contains(x) && (10..<20).contains(y) ? [255, 0, 0, 255] : [128, 128, 128, 255] }
        }
        origin.set("/spot.png", body: try Image(rgba: spot, width: 80, height: 30).encoded(as: .png), contentType: "image/png")
        let (smart, smartPixels) = try await rgba("/imgproxy/_/c:20:0:sm/f:png/plain/\(origin.address("/spot.png"))")
        #expect(smart.width == 20 && smart.height == 30)
        #expect((0..<20).contains { smartPixels[((15 * 20) + $0) * 4 + 1] == 0 }, "no red in the smart crop")
        // Flipped: blue on the left.
        let (_, flipped) = try await rgba("/imgproxy/_/fl:1/f:png/plain/\(src)")
        #expect(flipped[0] == 0 && flipped[2] == 255)
        // fq sets the JPEG's quality as q would; q wins over it.
        let photo = origin.address("/photo.jpg")
        let low = try await server.get("/imgproxy/_/q:20/plain/\(photo)@jpg")
        #expect(try await server.get("/imgproxy/_/fq:jpeg:20/plain/\(photo)@jpg").body == low.body)
        #expect(try await server.get("/imgproxy/_/q:20/fq:jpeg:90/plain/\(photo)@jpg").body == low.body)
        let webp = try await server.get("/imgproxy/_/fq:jpeg:20/plain/\(photo)@webp")
        #expect(webp.status == 200 && webp.body != low.body)
        // Content-Disposition on a miss and on the memory hit that follows, for imgproxy URLs only.
        for _ in 0..<2 {
            let reply = try await server.get("/imgproxy/_/rs:fit:50:50/fn:holiday/att:1/plain/\(photo)@webp")
            #expect(reply.header("Content-Disposition") == "attachment; filename=\"holiday.webp\"")
        }
        #expect(try await server.get("/imgproxy/_/rs:fit:50:50/plain/\(photo)").header("Content-Disposition") == "inline; filename=\"photo.jpg\"")
        #expect(try await server.get("/unsafe/50x50/\(photo)").header("Content-Disposition") == nil)
        await server.stop()
        await origin.stop()
    }

    @Test("skp answers a source of a listed format with its own bytes, unless the URL names another format")
    func skipProcessing() async throws {
        let gif = try TestImages.shared("no_time_for_that_tiny.gif")
        let origin = try await LoopbackOrigin.start()
        origin.set("/anim.gif", body: gif, contentType: "image/gif")
        let server = try await ServerHarness.start()
        let src = origin.address("/anim.gif")
        for _ in 0..<2 {
            let skipped = try await server.get("/imgproxy/_/rs:fit:10:10/skp:jpg:gif/plain/\(src)")
            #expect(skipped.status == 200 && skipped.body == gif && skipped.header("Content-Type") == "image/gif")
        }
        #expect(try await server.get("/imgproxy/_/rs:fit:10:10/skp:gif/plain/\(src)@gif").body == gif)
        // Another format named, or the source's format not listed: processed.
        let png = try #require(try await server.get("/imgproxy/_/rs:fit:10:10/skp:gif/plain/\(src)@png").image)
        #expect(png.format == .png && max(png.width, png.height) == 10)
        let resized = try #require(try await server.get("/imgproxy/_/rs:fit:10:10/skp:jpg/plain/\(src)").image)
        #expect(max(resized.width, resized.height) == 10)
        #expect(origin.hits("/anim.gif") == 1)
        #expect(try await server.get("/imgproxy/_/skp:nope/plain/\(src)").status == 400)
        // raw: the source as it is, whatever the URL asks.
        #expect(try await server.get("/imgproxy/_/raw:1/rs:fit:10:10/plain/\(src)@png").body == gif)
        await server.stop()
        await origin.stop()
    }

    @Test("wm draws the configured watermark by position, offsets, scale and opacity, tiled with re; without one it draws nothing")
    func watermark() async throws {
        let parsed = try ImgproxyURLParser(allowUnsigned: true, watermark: URL(string: "http://example.com/mark.png"))
            .parse(path: "/_/wm:0.25:soea:10:5:0.2/plain/http://example.com/a.jpg")
        let request = try #require(parsed.watermarks.first)
        #expect(request.transparency == 75 && request.imgproxy?.gravity == .bottomRight && request.imgproxy?.scale == 0.2)
        #expect(request.imgproxy?.offsetX == 10 && request.imgproxy?.offsetY == 5)
        #expect(try GeometryTests.imgproxy("wm:1:ce").watermarks.isEmpty)  // none configured
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("wm:2") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("wm:1:middle") }
        // Security options are refused, as imgproxy refuses them unless allowed.
        #expect(throws: ServerError.forbidden("imgproxy security option mrd is not allowed: the limits are the server's (osprey serve --help)")) {
            try GeometryTests.imgproxy("mrd:100")
        }

        func png(_ width: Int, _ height: Int, _ rgba: [UInt8]) throws -> Data {
            try Image(rgba: [[UInt8]](repeating: rgba, count: width * height).flatMap { $0 }, width: width, height: height).encoded(as: .png)
        }
        let origin = try await LoopbackOrigin.start()
        origin.set("/blue.png", body: try png(100, 80, [0, 0, 255, 255]), contentType: "image/png")
        origin.set("/mark.png", body: try png(10, 10, [0, 255, 0, 255]), contentType: "image/png")
        let server = try await ServerHarness.start { $0.imgproxyWatermark = URL(string: origin.address("/mark.png")) }
        let src = origin.address("/blue.png")
        func rgb(_ path: String) async throws -> (Int, Int) -> [UInt8] {
            let reply = try await server.get(path)
            let image = try #require(reply.image, "\(path): \(reply.status) \(reply.text)")
            let pixels = try image.rgbaPixels()
            return { x, y in Array(pixels[((y * image.width + x) * 4)..<((y * image.width + x) * 4 + 3)]) }
        }
        let green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]
        // Bottom right, 5 pixels from each edge.
        let corner = try await rgb("/imgproxy/_/wm:1:soea:5:5/f:png/plain/\(src)")
        #expect(corner(87, 67) == green && corner(92, 72) == green && corner(96, 76) == blue && corner(0, 0) == blue)
        // Tiled, 10 pixels apart.
        let tiled = try await rgb("/imgproxy/_/wm:1:re:10:10/f:png/plain/\(src)")
        #expect(tiled(5, 5) == green && tiled(15, 15) == blue && tiled(25, 25) == green)
        // Scaled to fit half the image (50x40): 40x40 at the top left.
        let scaled = try await rgb("/imgproxy/_/wm:1:nowe:0:0:0.5/f:png/plain/\(src)")
        #expect(scaled(35, 35) == green && scaled(45, 45) == blue)
        // Half transparent in the centre: half green, half blue.
        let half = try await rgb("/imgproxy/_/wm:0.5:ce/f:png/plain/\(src)")(50, 40)
        #expect(abs(Int(half[1]) - 128) <= 2 && abs(Int(half[2]) - 128) <= 2, "\(half)")
        #expect(origin.hits("/mark.png") == 1)
        await server.stop()
        // No watermark configured: wm is accepted and draws nothing.
        let plain = try await ServerHarness.start()
        let drawn = try await plain.get("/imgproxy/_/wm:1:ce/f:png/plain/\(src)")
        let undrawn = try await plain.get("/imgproxy/_/f:png/plain/\(src)")
        #expect(drawn.status == 200 && drawn.body == undrawn.body)
        await plain.stop()
        await origin.stop()
    }
}
