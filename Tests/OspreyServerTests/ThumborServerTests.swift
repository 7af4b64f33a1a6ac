import Foundation
import Osprey
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Server thumbor grammar over HTTP", .serialized, .timeLimit(.minutes(5)))
struct ThumborServerTests {
    @Test("libthumbor URLs (committed fixtures) are served with the sizes and formats they ask for")
    func libthumborFixtures() async throws {
        let fixtures = ClientFixtures.shared
        _ = try await LoopbackOrigin.fixtureOrigin(port: fixtures.origin_port)
        let server = try await ServerHarness.start { $0.thumborKey = fixtures.thumbor_key }
        for item in fixtures.thumbor {
            let reply = try await server.get(item.path)
            #expect(reply.status == 200, "\(item.name): \(reply.text)")
            let image = try #require(reply.image, "\(item.name)")
            #expect(image.width == item.width && image.height == item.height, "\(item.name): \(image.width)x\(image.height)")
            #expect(image.format?.rawValue == item.format, "\(item.name)")
        }
        // Unsafe is refused while a key is set; a tampered URL is 403 with a one-line reason.
        #expect(try await server.get("/" + fixtures.thumbor_unsafe).status == 403)
        let tampered = try await server.get(fixtures.thumbor[0].path.replacingOccurrences(of: "120x80", with: "120x81"))
        #expect(tampered.status == 403)
        #expect(tampered.text.contains("signature") && tampered.text.split(separator: "\n").count == 1)
        // One download served every variant (the origin is shared with other suites: count this
        // server's fetches).
        #expect(try await server.get("/metrics").text.contains("osprey_origin_fetches_total 1\n"))
        await server.stop()
    }

    @Test("unsafe URLs without a key: sizes, orig, flips, filters")
    func unsafeGrammar() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/alpha.png", body: TestImages.transparentPNG, contentType: "image/png")
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        let cases: [(String, Int, Int, String)] = [
            ("/unsafe/200x100/\(src)", 200, 100, "jpeg"),
            ("/unsafe/fit-in/200x200/\(src)", 200, 150, "jpeg"),
            ("/unsafe/fit-in/800x800/\(src)", 400, 300, "jpeg"),  // fit-in does not upscale
            ("/unsafe/full-fit-in/100x100/\(src)", 133, 100, "jpeg"),
            ("/unsafe/adaptive-fit-in/150x200/\(src)", 200, 150, "jpeg"),
            ("/unsafe/origx100/\(src)", 400, 100, "jpeg"),
            ("/unsafe/0x0/\(src)", 400, 300, "jpeg"),
            ("/unsafe/\(src)", 400, 300, "jpeg"),
            ("/unsafe/300x0/\(src)", 300, 225, "jpeg"),
            ("/unsafe/100x100/right/bottom/\(src)", 100, 100, "jpeg"),
            ("/unsafe/-100x-100/smart/\(src)", 100, 100, "jpeg"),
            ("/unsafe/800x600/filters:no_upscale()/\(src)", 400, 300, "jpeg"),
            (
                "/unsafe/100x100/filters:format(png):blur(2):sharpen(1,1,true):brightness(10):contrast(10):saturation(-20):rotate(90):round_corner(10,255,255,255)/\(src)",
                100, 100, "png"
            ),
            ("/unsafe/100x50/filters:format(webp):quality(50):grayscale():strip_exif():strip_icc()/\(src)", 100, 50, "webp"),
            ("/unsafe/100x50/filters:format(gif)/\(src)", 100, 50, "gif"),
            ("/unsafe/50x50/\(origin.address("/alpha.png"))", 50, 50, "png"),  // alpha: PNG, not JPEG
            ("/unsafe/100x100/127.0.0.1:\(origin.port)/photo.jpg", 100, 100, "jpeg"),  // no scheme: http
            ("/unsafe/300x100/filters:stretch()/\(src)", 300, 100, "jpeg"),
            ("/unsafe/debug/300x100/\(src)", 300, 100, "jpeg"),
            ("/unsafe/fit-in/300x100/filters:stretch()/\(src)", 133, 100, "jpeg"),  // no stretch with fit-in
            ("/unsafe/200x100/filters:proportion(0.5)/\(src)", 100, 50, "jpeg"),
            ("/unsafe/200x100/filters:proportion(2)/\(src)", 200, 100, "jpeg"),  // outside (0, 1]: ignored
            ("/unsafe/50x50/filters:background_color(ff0000)/\(origin.address("/alpha.png"))", 50, 50, "jpeg")  // flattened: no alpha
        ]
        for (path, width, height, format) in cases {
            let reply = try await server.get(path)
            #expect(reply.status == 200, "\(path): \(reply.text)")
            let image = try #require(reply.image, "\(path)")
            #expect(image.width == width && image.height == height, "\(path): \(image.width)x\(image.height)")
            #expect(image.format?.rawValue == format, "\(path)")
        }
        // max_age sets the answer's max-age, a miss and a memory hit alike; without it, the server's.
        for _ in 0..<2 {
            let aged = try await server.get("/unsafe/64x64/filters:max_age(60)/\(src)")
            #expect(aged.header("Cache-Control") == "public, max-age=60")
        }
        #expect(try await server.get("/unsafe/64x64/\(src)").header("Cache-Control") != "public, max-age=60")
        await server.stop()
        await origin.stop()
    }

    @Test("fill pads fit-in results; watermark draws a fetched image, under the same source rules")
    func fillAndWatermark() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/mark.png", body: TestImages.transparentPNG, contentType: "image/png")
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg"), mark = origin.address("/mark.png")
        let filled = try await server.get("/unsafe/fit-in/200x200/filters:fill(ff0000)/\(src)")
        let padded = try #require(filled.image)
        #expect(padded.width == 200 && padded.height == 200)
        let pixels = try padded.rgbaPixels()
        #expect(pixels[0] > 200 && pixels[1] < 60 && pixels[2] < 60)  // the red band above the image
        let transparent = try #require(try await server.get("/unsafe/fit-in/200x200/filters:fill(transparent):format(png)/\(src)").image)
        let clearPixels = try transparent.rgbaPixels()
        #expect(transparent.hasAlpha && clearPixels[3] == 0)

        let plain = try await server.get("/unsafe/200x150/\(src)")
        let marked = try await server.get("/unsafe/200x150/filters:watermark(\(mark),-10,-10,0,50,none)/\(src)")
        #expect(marked.status == 200, "\(marked.text)")
        #expect(marked.image?.width == 200 && marked.image?.height == 150)
        #expect(marked.body != plain.body)
        let centred = try await server.get("/unsafe/200x150/filters:watermark(\(mark),center,20p,50)/\(src)")
        #expect(centred.status == 200, "\(centred.text)")
        #expect(origin.hits("/mark.png") == 1)
        let refused = try await server.get("/unsafe/200x150/filters:watermark(http://10.1.2.3/mark.png,0,0,0)/\(src)")
        #expect(refused.status == 403, "\(refused.text)")
        let missing = try await server.get("/unsafe/200x150/filters:watermark(\(origin.address("/none.png")),0,0,0)/\(src)")
        #expect(missing.status == 404, "\(missing.text)")
        let tiled = try await server.get("/unsafe/200x150/filters:watermark(\(mark),repeat,0,0)/\(src)")
        #expect(tiled.status == 200 && tiled.body != marked.body, "\(tiled.text)")
        // fill(blur): the bands above and below the fitted image are the image, blurred (not white).
        let blurred = try #require(try await server.get("/unsafe/fit-in/200x200/filters:fill(blur)/\(src)").image)
        #expect(blurred.width == 200 && blurred.height == 200)
        let top = try blurred.rgbaPixels()
        #expect(top[0] < 250 || top[1] < 250 || top[2] < 250)
        let auto = try await server.get("/unsafe/fit-in/200x200/filters:fill(auto)/\(src)")
        #expect(auto.status == 200 && auto.image?.height == 200, "\(auto.text)")
        await server.stop()
        await origin.stop()
    }

    @Test("trim (thumbor trim/, imgproxy t:) cuts the border of a corner's colour or a given one, sides equalised on request")
    func trim() async throws {
        // White, a blue block at x 100..<200, y 60..<110, and a red 4x4 bottom-right corner.
        var pixels = [UInt8](repeating: 255, count: 300 * 200 * 4)
        for y in 0..<200 {
            for x in 0..<300 {
                let i = (y * 300 + x) * 4
                if (100..<200).contains(x) && (60..<110).contains(y) { (pixels[i], pixels[i + 1], pixels[i + 2]) = (20, 90, 200) }
                if x >= 296 && y >= 196 { (pixels[i + 1], pixels[i + 2]) = (0, 0) }
            }
        }
        let framed = try Image(rgba: pixels, width: 300, height: 200).encoded(as: .png)
        let origin = try await LoopbackOrigin.start()
        origin.set("/framed.png", body: framed, contentType: "image/png")
        let server = try await ServerHarness.start()
        let src = origin.address("/framed.png")
        func size(_ path: String) async throws -> (Int, Int)? {
            let reply = try await server.get(path)
            #expect(reply.status == 200, "\(path): \(reply.text)")
            return reply.image.map { ($0.width, $0.height) }
        }
        // From the top-left white: the block and the red corner pixel are kept.
        for path in ["/unsafe/trim/\(src)", "/unsafe/trim:top-left:20/\(src)", "/imgproxy/_/t:10/plain/\(src)"] {
            #expect(try await size(path)! == (200, 140), "\(path)")
        }
        #expect(try await size("/unsafe/trim/50x0/\(src)")! == (50, 35))
        // The bottom-right pixel is red: everything differs from it, nothing is cut.
        #expect(try await size("/unsafe/trim:bottom-right/\(src)")! == (300, 200))
        // The given colour: blue is the border and white the content, so nothing is cut; a
        // white border gives the block and the corner again.
        #expect(try await size("/imgproxy/_/t:10:1458c8/plain/\(src)")! == (300, 200))
        #expect(try await size("/imgproxy/_/t:10:ffffff/plain/\(src)")! == (200, 140))
        // Equal sides: left and right lose the smaller cut (left 100, right 0 -> 0 each).
        #expect(try await size("/imgproxy/_/t:10:ffffff:1/plain/\(src)")! == (300, 140))
        #expect(try await size("/imgproxy/_/t:10::0:1/plain/\(src)")! == (200, 200))
        // No threshold: no trim; a bad colour: 400.
        #expect(try await size("/imgproxy/_/t:/plain/\(src)")! == (300, 200))
        #expect(try await server.get("/imgproxy/_/t:10:white/plain/\(src)").status == 400)
        await server.stop()
        await origin.stop()
    }

    @Test("bad URLs, unknown filters, bad arguments, bad sources are 4xx with one line; origin failures 404/502")
    func errors() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/page.html", body: Data("<html>not an image</html>".utf8), contentType: "text/html")
        origin.set("/truncated.jpg", body: TestImages.photo.prefix(TestImages.photo.count / 3))
        origin.set("/broken.jpg", body: Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(repeating: 0x41, count: 2000))
        origin.set("/gone.jpg", LoopbackOrigin.Resource(status: 410))
        origin.set("/fails.jpg", LoopbackOrigin.Resource(status: 500))
        let server = try await ServerHarness.start()
        let src = origin.address("/photo.jpg")
        let cases: [(String, Int)] = [
            ("/unsafe/100x100/filters:nope()/\(src)", 400),
            ("/unsafe/100x100/filters:quality(101)/\(src)", 400),
            ("/unsafe/100x100/filters:format(tiff)/\(src)", 400),
            ("/unsafe/100x100/filters:blur(x)/\(src)", 400),
            ("/unsafe/100x100/filters:quality(80)", 400),
            ("/unsafe/", 400),
            ("/nothing", 400),
            ("/unsafe/100x100/ftp://example.com/a.jpg", 400),
            ("/AAAAAAAAAAAAAAAAAAAAAAAAAAA=/100x100/\(src)", 403),
            ("/unsafe/100x100/\(origin.address("/page.html"))", 422),
            ("/unsafe/100x100/\(origin.address("/truncated.jpg"))", 422),
            ("/unsafe/100x100/\(origin.address("/broken.jpg"))", 422),
            ("/unsafe/100x100/\(origin.address("/missing.jpg"))", 404),
            ("/unsafe/100x100/\(origin.address("/gone.jpg"))", 404),
            ("/unsafe/100x100/\(origin.address("/fails.jpg"))", 502),
            ("/unsafe/100x100/http://127.0.0.1:1/a.jpg", 502),
            ("/unsafe/10x10:5x5/100x100/\(src)", 400),
            ("/unsafe/500x500:600x600/100x100/\(src)", 422)
        ]
        for (path, status) in cases {
            let reply = try await server.get(path)
            #expect(reply.status == status, "\(path): \(reply.status) \(reply.text)")
            #expect(!reply.text.isEmpty && reply.text.split(separator: "\n").count == 1, "\(path): \(reply.text)")
        }
        await server.stop()
        await origin.stop()
    }
}
