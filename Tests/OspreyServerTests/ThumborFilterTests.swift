import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

/// thumbor's pixel filters (rgb, colorize, curve, equalize, convolution, noise) and the filters
/// that change what is fetched or answered (extract_focal, autojpg, red_eye), over HTTP. The
/// expected pixels are thumbor's C filters' arithmetic; the curve values were computed with
/// thumbor's own `cubic_spline_interpolation`.
@Suite("Server thumbor pixel filters over HTTP", .serialized, .timeLimit(.minutes(5)))
struct ThumborFilterTests {
    /// A `width` x `height` PNG, left half `left`, right half `right`; with `alpha` an RGBA PNG.
    static func png(width: Int = 40, height: Int = 30, left: [UInt8], right: [UInt8]? = nil, alpha: Bool = true) throws -> Data {
        var pixels: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width { pixels += (x < width / 2 ? left : right ?? left) + [255] }
        }
        let image = try Image(rgba: pixels, width: width, height: height)
        guard !alpha else { return try image.encoded(as: .png) }
        return try ImageProcessors.Pad(background: .white).process(image).encoded(as: .png)
    }

    /// The RGB of pixel `(x, y)` of a reply's image.
    static func rgb(_ reply: ServerHarness.Reply, _ x: Int = 0, _ y: Int = 0) throws -> [UInt8] {
        let image = try #require(reply.image, "\(reply.status) \(reply.text)")
        let pixels = try image.rgbaPixels()
        let i = (y * image.width + x) * 4
        return Array(pixels[i..<(i + 3)])
    }

    @Test("rgb, colorize and curve give thumbor's values")
    func colourTables() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/flat.png", body: try Self.png(left: [100, 150, 200]), contentType: "image/png")
        origin.set("/steps.png", body: try Self.png(left: [102, 153, 204], right: [10, 153, 204]), contentType: "image/png")
        let server = try await ServerHarness.start()
        let flat = origin.address("/flat.png"), steps = origin.address("/steps.png")
        // 255 * 20 / 100 = 51; 255 * -10 / 100 = -25 (C's division truncates).
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):rgb(20,-10,0)/\(flat)")) == [151, 125, 200])
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):rgb(100,100,-100)/\(flat)")) == [255, 255, 0])
        // brightness: + 255 * v / 100; contrast: (v + 100)² / 100 percent of the distance from 128.
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):brightness(20)/\(flat)")) == [151, 201, 251])
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):brightness(-10)/\(flat)")) == [75, 125, 175])
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):contrast(20)/\(flat)")) == [88, 159, 231])
        // saturation: the argument is the factor around √(0.299 R² + 0.587 G² + 0.114 B²) = 144.08.
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):saturation(0.5)/\(flat)")) == [122, 147, 172])
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):saturation(-1)/\(flat)")) == [188, 138, 88])
        // (x * (100 - p) + fill * p) / 100: red all the way to ff, blue halfway to 00.
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):colorize(100,0,50,ff0000)/\(flat)")) == [255, 150, 100])
        // curve(all, red, green, blue): red through thumbor's documented red curve, then all
        // channels through the documented all-channels curve.
        let all = "[(0,0),(40,59),(255,255)]"
        let red = "[(32,59),(64,80),(92,111),(128,153),(140,169),(164,201),(192,214),(224,215),(240,214),(255,212)]"
        let identity = "[(0,0),(255,255)]"
        let curved = try await server.get("/unsafe/filters:format(png):curve(\(all),\(red),\(identity),\(identity))/\(steps)")
        #expect(try Self.rgb(curved, 0, 0) == [153, 181, 220])
        // Below the red curve's first point: its first value (59), then the all-channels curve.
        #expect(try Self.rgb(curved, 39, 0) == [84, 181, 220])
        await server.stop()
        await origin.stop()
    }

    @Test("equalize, convolution and noise run; noise is the same for the same seed")
    func pixelFilters() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/halves.png", body: try Self.png(left: [10, 20, 30], right: [50, 60, 70]), contentType: "image/png")
        origin.set("/flat.png", body: try Self.png(left: [100, 150, 200]), contentType: "image/png")
        let server = try await ServerHarness.start()
        let halves = origin.address("/halves.png"), flat = origin.address("/flat.png")
        let equalized = try await server.get("/unsafe/filters:format(png):equalize()/\(halves)")
        #expect(try Self.rgb(equalized, 0, 0) == [0, 0, 0])
        #expect(try Self.rgb(equalized, 39, 29) == [255, 255, 255])
        // A normalised kernel leaves a flat image flat; the raw one (sum 16) saturates it.
        let blurred = try await server.get("/unsafe/filters:format(png):convolution(1;2;1;2;4;2;1;2;1,3,true)/\(flat)")
        #expect(try Self.rgb(blurred, 5, 5) == [100, 150, 200])
        let raw = try await server.get("/unsafe/filters:format(png):convolution(1;2;1;2;4;2;1;2;1,3,false)/\(flat)")
        #expect(try Self.rgb(raw, 5, 5) == [255, 255, 255])
        let noisy = try await server.get("/unsafe/filters:format(png):noise(20,5)/\(flat)")
        let noisyImage = try #require(noisy.image)
        let pixels = try noisyImage.rgbaPixels()
        var offsets = Set<Int>()
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let offset = Int(pixels[i]) - 100
            offsets.insert(offset)
            #expect((-10..<10).contains(offset))
            #expect(Int(pixels[i + 1]) - 150 == offset && Int(pixels[i + 2]) - 200 == offset)
        }
        #expect(offsets.count > 10)
        // The same seed through another resize path (a new result): the same pixels.
        let again = try #require(try await server.get("/unsafe/40x30/filters:format(png):noise(20,5)/\(flat)").image)
        #expect(try again.rgbaPixels() == pixels)
        await server.stop()
        await origin.stop()
    }

    @Test("meta/ answers thumbor's JSON: the source, the crops, resizes and flips in order, the target; JSONP with callback")
    func metadata() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        func json(_ reply: ServerHarness.Reply) throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: reply.body) as? [String: Any]
            return try #require(object?["thumbor"] as? [String: Any], "\(reply.status) \(reply.text)")
        }
        // 400x300 filled into 200x100: scaled to 200x150, then the middle 100 rows.
        let filled = try await server.get("/unsafe/meta/200x100/\(src)")
        #expect(filled.header("Content-Type") == "application/json")
        let body = try json(filled)
        let source = try #require(body["source"] as? [String: Any])
        #expect(source["width"] as? Int == 400 && source["height"] as? Int == 300 && source["frameCount"] as? Int == 1)
        #expect(source["url"] as? String == src)
        let operations = try #require(body["operations"] as? [[String: Any]])
        #expect(operations.count == 2)
        #expect(
            operations.first?["type"] as? String == "resize" && operations.first?["width"] as? Int == 200
                && operations.first?["height"] as? Int == 150)
        #expect(operations.last?["type"] as? String == "crop" && operations.last?["top"] as? Int == 25 && operations.last?["bottom"] as? Int == 125)
        #expect((body["target"] as? [String: Any])?["width"] as? Int == 200 && (body["target"] as? [String: Any])?["height"] as? Int == 100)
        // A manual crop, a proportional size and a flip, as thumbor lists them.
        let cropped = try json(try await server.get("/unsafe/meta/10x20:210x170/-100x0/\(src)"))
        let types = (cropped["operations"] as? [[String: Any]])?.compactMap { $0["type"] as? String }
        #expect(types == ["crop", "resize", "flip_horizontally"])
        #expect((cropped["target"] as? [String: Any])?["height"] as? Int == 75)
        // JSONP.
        let jsonp = try await server.get("/unsafe/meta/fit-in/100x100/\(src)?callback=show")
        #expect(jsonp.header("Content-Type") == "text/javascript" && jsonp.text.hasPrefix("show({") && jsonp.text.hasSuffix("});"))
        #expect(try await server.get("/unsafe/meta/100x100/\(src)?callback=a-b").status == 400)
        // The image itself is still answered for the same URL without meta/; one download for all.
        #expect(try await server.get("/unsafe/200x100/\(src)").image?.height == 100)
        #expect(origin.hits("/photo.jpg") == 1)
        await server.stop()
        await origin.stop()
    }

    @Test("rotate turns counter-clockwise, as thumbor's engine; other angles than multiples of 90 change nothing")
    func rotation() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/halves.png", body: try Self.png(left: [255, 0, 0], right: [0, 0, 255]), contentType: "image/png")
        let server = try await ServerHarness.start()
        let halves = origin.address("/halves.png")
        // The right half (blue) comes to the top.
        let turned = try await server.get("/unsafe/filters:format(png):rotate(90)/\(halves)")
        #expect(turned.image?.width == 30 && turned.image?.height == 40)
        #expect(try Self.rgb(turned, 0, 0) == [0, 0, 255] && Self.rgb(turned, 0, 39) == [255, 0, 0])
        #expect(try Self.rgb(try await server.get("/unsafe/filters:format(png):rotate(-90)/\(halves)"), 0, 0) == [255, 0, 0])
        let unturned = try await server.get("/unsafe/filters:format(png):rotate(45)/\(halves)")
        #expect(unturned.image?.width == 40 && unturned.image?.height == 30)
        await server.stop()
        await origin.stop()
    }

    @Test("extract_focal fetches the embedded URL's image and centres fill crops on its crop")
    func extractFocal() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        let focal = try await server.get("/unsafe/100x100/filters:focal(300x0:400x100)/\(src)")
        #expect(focal.status == 200, "\(focal.text)")
        for embedded in [
            "localhost:8888/unsafe/300x0:400x100/\(src)",
            "http://thumbor.example/unsafe/300x0:400x100/fit-in/50x50/filters:quality(10)/\(src)",
            "thumbor.example/abcdefghijklmnopqrstuvwxyz0123=/300x0:400x100/\(src)",
            // Nested: the outer embedded URL has no crop, the inner one has.
            "thumbor.example/unsafe/200x200/thumbor.example/unsafe/300x0:400x100/\(src)"
        ] {
            let reply = try await server.get("/unsafe/100x100/filters:extract_focal()/\(embedded)")
            #expect(reply.status == 200, "\(embedded): \(reply.text)")
            #expect(reply.body == focal.body, "\(embedded)")
        }
        #expect(origin.hits("/photo.jpg") == 1)
        // No crop anywhere: the image part is fetched as it is (here a host that does not answer).
        #expect(try await server.get("/unsafe/100x100/filters:extract_focal()/127.0.0.1:1/unsafe/200x200/\(src)").status != 200)
        await server.stop()
        await origin.stop()
    }

    @Test("autojpg(false) keeps a PNG source PNG; red_eye() changes nothing; bad arguments are 400s")
    func answerFilters() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/opaque.png", body: try Self.png(left: [100, 150, 200], alpha: false), contentType: "image/png")
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start()
        let opaque = origin.address("/opaque.png"), src = origin.address("/photo.jpg")
        #expect(try await server.get("/unsafe/20x20/\(opaque)").image?.format == .jpeg)
        #expect(try await server.get("/unsafe/20x20/filters:autojpg()/\(opaque)").image?.format == .jpeg)
        #expect(try await server.get("/unsafe/20x20/filters:autojpg(true)/\(opaque)").image?.format == .jpeg)
        #expect(try await server.get("/unsafe/20x20/filters:autojpg(false)/\(opaque)").image?.format == .png)
        // A JPEG source stays JPEG either way.
        #expect(try await server.get("/unsafe/20x20/filters:autojpg(false)/\(src)").image?.format == .jpeg)
        let plain = try await server.get("/unsafe/100x100/\(src)")
        #expect(try await server.get("/unsafe/100x100/filters:red_eye()/\(src)").body == plain.body)
        for path in [
            "/unsafe/filters:rgb(101,0,0)/\(src)", "/unsafe/filters:rgb(1,2)/\(src)", "/unsafe/filters:colorize(10,10,10,zzzzzz)/\(src)",
            "/unsafe/filters:curve([(0,0)],[(0,0)],[(0,0)])/\(src)", "/unsafe/filters:curve([(9,0),(3,5)],[(0,0)],[(0,0)],[(0,0)])/\(src)",
            "/unsafe/filters:convolution(1;1,2)/\(src)", "/unsafe/filters:convolution(1;x;1,3)/\(src)",
            "/unsafe/filters:convolution(1;1;1,3,maybe)/\(src)", "/unsafe/filters:noise(101)/\(src)", "/unsafe/filters:autojpg(maybe)/\(src)"
        ] {
            let reply = try await server.get(path)
            #expect(reply.status == 400, "\(path): \(reply.status) \(reply.text)")
            #expect(reply.text.hasPrefix("thumbor filter"), "\(path): \(reply.text)")
        }
        await server.stop()
        await origin.stop()
    }
}

/// thumbor's `frame(url)`: a nine-patch drawn around the image.
@Suite("Server thumbor frame (nine-patch) over HTTP", .serialized, .timeLimit(.minutes(3)))
struct ThumborFrameTests {
    static func ninePatch() throws -> Data {
        try Image(rgba: NinePatchFixture.rgba, width: NinePatchFixture.side, height: NinePatchFixture.side).encoded(as: .png)
    }

    @Test func aFrameIsDrawnAroundTheImageGrownByThePatchPadding() async throws {
        var blue: [UInt8] = []
        for _ in 0..<(40 * 30) { blue += [0, 0, 255, 255] }
        let origin = try await LoopbackOrigin.start()
        origin.set("/blue.png", body: try Image(rgba: blue, width: 40, height: 30).encoded(as: .png), contentType: "image/png")
        origin.set("/frame.png", body: try Self.ninePatch(), contentType: "image/png")
        origin.set("/plain.png", body: try Image(rgba: blue, width: 40, height: 30).encoded(as: .png), contentType: "image/png")
        let server = try await ServerHarness.start()
        let reply = try await server.get("/unsafe/filters:format(png):frame(\(origin.address("/frame.png")))/\(origin.address("/blue.png"))")
        let image = try #require(reply.image, "\(reply.status) \(reply.text)")
        #expect(image.width == 44 && image.height == 34)
        let pixels = try image.rgbaPixels()
        func rgb(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(pixels[(y * 44 + x) * 4 + $0]) } }
        func near(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 24 } }
        for (x, y, expected) in [
            (0, 0, [255, 0, 0]), (1, 17, [255, 0, 0]), (22, 1, [255, 0, 0]), (43, 33, [255, 0, 0]),
            (22, 17, [0, 0, 255]), (3, 17, [0, 0, 255]), (22, 30, [0, 0, 255])
        ] {
            #expect(near(rgb(x, y), expected), "(\(x), \(y)): \(rgb(x, y))")
        }
        #expect(origin.hits("/frame.png") == 1)
        // A patch without marks is refused with the reason; a frame on a private address is 403.
        let plain = try await server.get("/unsafe/filters:frame(\(origin.address("/plain.png")))/\(origin.address("/blue.png"))")
        #expect((400..<500).contains(plain.status) && plain.text.contains("nine-patch"), "\(plain.status) \(plain.text)")
        #expect(try await server.get("/unsafe/filters:frame(http://10.1.2.3/f.png)/\(origin.address("/blue.png"))").status == 403)
        await server.stop()
        await origin.stop()
    }
}
