import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("imgproxy parity: the default preset, presets-only mode, chained pipelines", .timeLimit(.minutes(3)))
struct ImgproxyPresetsTests {
    static let source = "/plain/http://example.com/a.jpg"

    static func chain(_ parser: ImgproxyURLParser, _ options: String) throws -> [String] {
        try parser.parse(path: "/_/\(options)\(source)").processors.map(\.identifier)
    }

    @Test("The default preset applies to every URL, before the URL's own options")
    func defaultPreset() throws {
        let parser = ImgproxyURLParser(allowUnsigned: true, presets: ["default": "rs:fit:200:200/q:70", "blurred": "bl:3"])
        let plain = try parser.parse(path: "/_\(Self.source)")
        #expect(plain.quality == 70)
        #expect(try Self.chain(parser, "bl:2") == Self.chain(ImgproxyURLParser(allowUnsigned: true), "rs:fit:200:200/bl:2"))
        // The URL's options win over the default's.
        #expect(try parser.parse(path: "/_/q:40\(Self.source)").quality == 40)
        #expect(try Self.chain(parser, "pr:blurred") == Self.chain(ImgproxyURLParser(allowUnsigned: true), "rs:fit:200:200/bl:3"))
    }

    @Test("Presets-only mode: segments are preset names, any other option is a 400 with the reason")
    func onlyPresets() throws {
        var parser = ImgproxyURLParser(allowUnsigned: true, presets: ["thumb": "rs:fill:100:100", "sharp": "sh:1"])
        parser.onlyPresets = true
        let reference = ImgproxyURLParser(allowUnsigned: true)
        #expect(try Self.chain(parser, "thumb") == Self.chain(reference, "rs:fill:100:100"))
        #expect(try Self.chain(parser, "thumb/sharp") == Self.chain(reference, "rs:fill:100:100/sh:1"))
        #expect(try Self.chain(parser, "pr:thumb:sharp") == Self.chain(reference, "rs:fill:100:100/sh:1"))
        do {
            _ = try parser.parse(path: "/_/thumb/rs:fit:10:10\(Self.source)")
            Issue.record("an option outside the presets was served")
        } catch {
            #expect(error.status == 400 && error.reason.contains("only presets are served"), "\(error)")
        }
        #expect(throws: ServerError.self) { try parser.parse(path: "/_/pr:none\(Self.source)") }
        // The extension still names the format; base64 sources still parse.
        #expect(try parser.parse(path: "/_/thumb\(Self.source)@webp").format == .webp)
        let encoded = Data("http://example.com/a.jpg".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        #expect(try parser.parse(path: "/_/thumb/\(encoded).png").source.absoluteString == "http://example.com/a.jpg")
    }

    @Test("Chained pipelines: each runs on the result of the one before; output options from the last")
    func chained() throws {
        let parser = ImgproxyURLParser(allowUnsigned: true)
        let job = try parser.parse(path: "/_/rs:fill:200:100/q:50/-/rs:fit:50:50/bl:1/q:60/f:png\(Self.source)")
        let first = try Self.chain(parser, "rs:fill:200:100")
        let second = try Self.chain(parser, "rs:fit:50:50/bl:1")
        #expect(job.processors.map(\.identifier) == first + second)
        #expect(job.quality == 60 && job.format == .png)
        #expect(throws: ServerError.self) { try parser.parse(path: "/_/rs:fit:10:10/-/rs:nope:1:1\(Self.source)") }
        // Only the options of each pipeline: a crop of the first pipeline's result.
        #expect(ResultSize.largest(job.processors, width: 400, height: 300).width <= 200)
    }

    @Test("Served: a chain's result has the last pipeline's size; presets-only refuses options with 400")
    func served() async throws {
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start {
            $0.imgproxyPresets = ["default": "q:75", "square": "rs:fill:100:100", "wide": "rs:fit:200:50"]
            $0.imgproxyOnlyPresets = true
        }
        // Filled to 100x100, then fitted in 200x50: 50x50 (one pipeline of both would be 67x50).
        let chained = try await server.get("/imgproxy/_/square/-/pr:wide/plain/\(origin.address("/photo.jpg"))")
        #expect(chained.status == 200 && chained.image?.width == 50 && chained.image?.height == 50, "\(chained.status) \(chained.text.prefix(200))")
        let refused = try await server.get("/imgproxy/_/rs:fit:10:10/plain/\(origin.address("/photo.jpg"))")
        #expect(refused.status == 400 && refused.text.contains("only presets"))
        await server.stop()
        await origin.stop()
    }

    @Test("f:best answers the smallest of the formats the client accepts, with Vary: Accept")
    func bestFormat() async throws {
        #expect(try ImgproxyURLParser(allowUnsigned: true).parse(path: "/_/f:best\(Self.source)").bestFormat)
        #expect(try ImgproxyURLParser(allowUnsigned: true).parse(path: "/_/f:best/f:png\(Self.source)").bestFormat == false)
        let origin = try await LoopbackOrigin.start()
        origin.set("/photo.jpg", body: TestImages.photo)
        origin.set("/alpha.png", body: TestImages.transparentPNG, contentType: "image/png")
        let server = try await ServerHarness.start()
        for (name, accept, formats) in [
            ("/photo.jpg", "image/webp,*/*", ["webp", "jpg", "png"]), ("/photo.jpg", "*/*", ["jpg", "png"]),
            ("/alpha.png", "image/webp,*/*", ["webp", "png"])
        ] {
            var sizes: [String: Int] = [:]
            for format in formats {
                sizes[format] = try await server.get("/imgproxy/_/rs:fit:120:120/f:\(format)/plain/\(origin.address(name))").body.count
            }
            let best = try await server.get("/imgproxy/_/rs:fit:120:120/f:best/plain/\(origin.address(name))", headers: [("Accept", accept)])
            let smallest = try #require(sizes.min { $0.value < $1.value })
            #expect(best.status == 200 && best.body.count == smallest.value, "\(name) \(accept): \(best.body.count) vs \(sizes)")
            #expect(best.header("Content-Type") == "image/\(smallest.key == "jpg" ? "jpeg" : smallest.key)")
            #expect(best.header("Vary")?.contains("Accept") == true)
        }
        await server.stop()
        await origin.stop()
    }
}
