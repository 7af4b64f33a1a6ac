import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hostile and malformed JPEG XL, SVG and PDF files: the typed error, never a crash, and size
/// limits as for the other formats' bombs; an SVG's external references are never fetched.
@Suite("Hostile JPEG XL, SVG and PDF files", .timeLimit(.minutes(5)))
struct HostileFormatTests {
    /// A bare JPEG XL codestream whose size header declares `side` x `side` (1...262144), with
    /// default metadata and nothing after: a bomb in 38 bytes.
    static func jxlBomb(side: Int) -> Data {
        var bits: [UInt8] = []
        func put(_ value: Int, _ count: Int) { for bit in 0..<count { bits.append(UInt8((value >> bit) & 1)) } }
        put(0, 1)  // not small
        put(2, 2)  // height: 18 bits + 1
        put(side - 1, 18)
        put(1, 3)  // aspect ratio 1:1, so width = height
        put(1, 1)  // all-default image metadata
        put(1, 1)  // all-default frame header
        while bits.count % 8 != 0 { bits.append(0) }
        var bytes: [UInt8] = [0xFF, 0x0A]
        for start in stride(from: 0, to: bits.count, by: 8) {
            bytes.append((0..<8).reduce(0) { $0 | bits[start + $1] << UInt8($1) })
        }
        return Data(bytes + [UInt8](repeating: 0, count: 32))
    }

    /// The fixture PDF with its first page's media box replaced by `box`.
    static func pdf(mediaBox box: String) throws -> Data {
        var data = try FixtureImages.formatData("drawing.pdf")
        let range = try #require(data.range(of: Data("/MediaBox [0 0 90 67.5 ]".utf8)))
        data.replaceSubrange(range, with: Data("/MediaBox [\(box)]".utf8))
        return data
    }

    static let limit = DecodingOptions.defaultMaxSourcePixels

    @Test("huge canvases are refused from their headers with tooLarge, as bombs are")
    func bombs() throws {
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="50000"><rect width="9" height="9"/></svg>"#.utf8)
        #expect(throws: OspreyError.decoding(.tooLarge(width: 100_000, height: 50_000, frames: 1, limitPixels: Self.limit))) {
            try Image(data: svg)
        }
        // What is refused is what would be drawn: a drawing asked for at a bomb's size is refused too,
        // and the huge canvas drawn into a thumbnail box is a small drawing.
        #expect(throws: OspreyError.decoding(.tooLarge(width: 100_000, height: 75_000, frames: 1, limitPixels: Self.limit))) {
            try ImageDecoder().decode(
                try FixtureImages.formatData("drawing.svg"), processedBy: ImageProcessors.Resize(width: 100_000, height: 100_000))
        }
        let small = try Image(data: svg, options: DecodingOptions(thumbnail: .init(maxPixelSize: 64)))
        #expect((small.width, small.height) == (64, 32))
        let pdf = try Self.pdf(mediaBox: "0 0 90000 67500")
        #expect(throws: OspreyError.decoding(.tooLarge(width: 90_000, height: 67_500, frames: 1, limitPixels: Self.limit))) {
            try Image(data: pdf)
        }
        let jxl = Self.jxlBomb(side: 100_000)
        #expect(jxl.count < 64)
        #expect(ImageFormat(sniffing: jxl) == .jxl)
        #expect(throws: OspreyError.decoding(.tooLarge(width: 100_000, height: 100_000, frames: 1, limitPixels: Self.limit))) {
            try Image(data: jxl)
        }
    }

    @Test("an entity expansion and a <use> reference bomb fail with a decoding error")
    func svgParserBombs() throws {
        var entities = #"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">"#
        for (name, previous) in zip("bcdefgh", "abcdefg") {
            entities += "<!ENTITY \(name) \"" + String(repeating: "&\(previous);", count: 16) + "\">"
        }
        entities += #"]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&h;</text></svg>"#
        var uses = #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">"#
        uses += #"<defs><rect id="l0" width="1" height="1"/>"#
        for level in 1...11 { uses += "<g id=\"l\(level)\">" + String(repeating: "<use xlink:href=\"#l\(level - 1)\"/>", count: 10) + "</g>" }
        uses += ##"</defs><use xlink:href="#l11"/></svg>"##
        for bomb in [entities, uses] {
            let data = Data(bomb.utf8)
            #expect(ImageFormat(sniffing: data) == .svg)
            let error = #expect(throws: OspreyError.self) { try Image(data: data) }
            #expect(error?.isDecodingError == true, "\(String(describing: error))")
        }
    }

    @Test("truncated and damaged files of each format give a decoding error", arguments: ["hopper.jxl", "drawing.svg", "drawing.pdf"])
    func malformed(name: String) throws {
        let data = try FixtureImages.formatData(name)
        var rng = SplitMix64(seed: 61)
        var cases: [Data] = [data.prefix(data.count / 2), data.prefix(data.count / 8), data.prefix(12)]
        for _ in 0..<12 {
            var bytes = [UInt8](data)
            for _ in 0..<8 { bytes[Int.random(in: 12..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            cases.append(Data(bytes))
        }
        for damaged in cases {
            do {
                let image = try Image(data: damaged)
                // Some damage leaves a decodable file (a changed colour, a damaged trailer poppler
                // repairs): then it is a whole image.
                #expect(image.width > 0 && image.height > 0)
            } catch {
                #expect(error.isDecodingError, "\(error)")
            }
        }
    }

    @Test("the decoder fuzz target's seeds (Fuzz/Corpus/decoder) give an image within the limit or a decoding error")
    func fuzzSeeds() throws {
        let corpus = FixtureImages.formatsDirectory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/decoder")
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        #expect(names.count >= 10)
        for name in names {
            let data = try Data(contentsOf: corpus.appendingPathComponent(name))
            for thumbnail in [nil, DecodingOptions.Thumbnail(maxPixelSize: 64)] {
                do {
                    let image = try ImageDecoder(options: DecodingOptions(thumbnail: thumbnail, maxSourcePixels: 4_000_000)).decode(data)
                    #expect(image.width * image.height <= 4_000_000, "\(name)")
                } catch {
                    #expect(error.isDecodingError, "\(name): \(error)")
                }
            }
        }
    }

    @Test("an SVG's external images, styles and scripts are never fetched")
    func svgFetchesNothing() async throws {
        let pixel = try TestData.data("hopper.png")
        let origin = try await LoopbackOrigin.start(bodies: ["pixel.png": pixel, "style.css": Data("rect{fill:red}".utf8), "x.svg": Data()])
        let base = "http://127.0.0.1:\(origin.port)"
        let svg = """
            <?xml version="1.0"?>
            <?xml-stylesheet href="\(base)/style.css" type="text/css"?>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">
              <style>@import url("\(base)/style.css");</style>
              <image href="\(base)/pixel.png" width="20" height="20"/>
              <image xlink:href="\(base)/pixel.png" x="20" width="20" height="20"/>
              <use href="\(base)/x.svg#a"/>
              <rect width="10" height="10" fill="url(\(base)/x.svg#g)"/>
              <script>fetch("\(base)/pixel.png")</script>
            </svg>
            """
        let image = try? Image(data: Data(svg.utf8))
        #expect(image.map { ($0.width, $0.height) } ?? (40, 40) == (40, 40))
        #expect(origin.bodiesServed == 0, "librsvg fetched an external resource")
        // The origin answers when asked: the count above would have seen a fetch.
        let url = origin.url("/pixel.png")
        _ = try await withDeadline("the origin's answer") { try await URLSession.shared.data(from: url).0 }
        #expect(origin.bodiesServed == 1)
        await origin.stop()
    }

    @Test("sniffing: an SVG by its first element, JPEG XL in both forms, PDF by %PDF-")
    func sniffing() {
        let svgs = [
            #"<svg xmlns="http://www.w3.org/2000/svg"/>"#,
            "\u{FEFF}  \n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand > -->\n<svg width=\"1\" height=\"1\"></svg>",
            #"<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg>"#,
            #"<!DOCTYPE svg [<!ENTITY a "<b>">]><svg>"#,
            #"<svg:svg xmlns:svg="http://www.w3.org/2000/svg"/>"#
        ]
        for text in svgs { #expect(ImageFormat(sniffing: Data(text.utf8)) == .svg, "\(text)") }
        let others = ["<html><body><svg></svg></body></html>", "<svgx/>", "<?xml version=\"1.0\"?><feed>", "svg", "<!-- <svg> -->"]
        for text in others { #expect(ImageFormat(sniffing: Data(text.utf8)) == nil, "\(text)") }
        #expect(ImageFormat(sniffing: Data([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0])) == .jxl)
        #expect(ImageFormat(sniffing: Data("%PDF-1.7\n".utf8)) == .pdf)
        #expect(ImageFormat.svg.mimeType == "image/svg+xml" && ImageFormat.pdf.mimeType == "application/pdf")
        #expect(ImageFormat.jxl.mimeType == "image/jxl")
        #expect(!ImageFormat.svg.canEncode && !ImageFormat.pdf.canEncode)
    }
}

extension OspreyError {
    /// Whether this is a ``OspreyError/decoding(_:)`` error.
    var isDecodingError: Bool {
        if case .decoding = self { return true }
        return false
    }
}
