import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// JPEG XL, SVG and PDF decoded (and JPEG XL encoded) by Osprey against the reference tools'
/// own output: pixels within a small tolerance of theirs.
@Suite("Formats against the reference tools: djxl/cjxl, rsvg-convert, pdftoppm", .timeLimit(.minutes(5)))
struct FormatReferenceTests {
    @Test("a JPEG XL decodes to djxl's pixels")
    func jxlDecodesLikeDjxl() async throws {
        let directory = try ReferenceTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try FixtureImages.formatData("hopper.jxl")
        #expect(ImageFormat(sniffing: data) == .jxl)
        let image = try Image(data: data)
        #expect(image.format == .jxl)
        try #require(image.width == 128 && image.height == 128)
        let reference = directory.appendingPathComponent("djxl.png")
        try await ReferenceTools.run(
            "djxl", package: "libjxl-tools", [FixtureImages.formatsDirectory.appendingPathComponent("hopper.jxl").path, reference.path])
        let theirs = try Image(contentsOf: reference)
        try #require(theirs.width == 128 && theirs.height == 128)
        let (ours, their) = (try image.rgbaPixels(), try theirs.rgbaPixels())
        #expect(Pixels.meanDifference(ours, their) < 0.5)
        #expect(ReferenceTools.maxDifference(ours, their) <= 2)
    }

    @Test("Osprey's JPEG XL decodes with djxl: lossless at quality 100, close to the source at 80")
    func jxlEncodesForDjxl() async throws {
        let directory = try ReferenceTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(ImageFormat.jxl.canEncode)
        let source = try TestData.image("hopper.png")
        for quality in [100, 80] {
            let encoded = try source.encoded(as: .jxl, quality: quality)
            #expect(ImageFormat(sniffing: encoded) == .jxl)
            let file = directory.appendingPathComponent("q\(quality).jxl"), decoded = directory.appendingPathComponent("q\(quality).png")
            try encoded.write(to: file)
            try await ReferenceTools.run("djxl", package: "libjxl-tools", [file.path, decoded.path])
            let theirs = try Image(contentsOf: decoded)
            let difference = Pixels.meanDifference(try source.rgbaPixels(), try theirs.rgbaPixels())
            if quality == 100 {
                #expect(difference == 0, "lossless")
            } else {
                #expect(difference < 4, "quality 80: \(difference)")
                #expect(encoded.count < 12_000, "lossy: \(encoded.count) bytes")
            }
        }
        // Encoder options: libjxl's effort is checked and used.
        #expect(throws: OspreyError.self) { try ImageEncoder(format: .jxl, jxlEffort: 10).encode(source) }
        #expect(throws: OspreyError.self) { try ImageEncoder(format: .jxl, jxlEffort: 2).encode(source) }
        let fast = try ImageEncoder(format: .jxl, quality: 80, jxlEffort: 3).encode(source)
        #expect(try Image(data: fast).width == 128)
    }

    @Test("an SVG drawn at 800 px is rsvg-convert -w 800's drawing, not an upscale")
    func svgAtTargetSize() async throws {
        let directory = try ReferenceTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try FixtureImages.formatData("drawing.svg")
        #expect(ImageFormat(sniffing: data) == .svg)
        let declared = try Image(data: data)
        #expect((declared.width, declared.height, declared.format) == (120, 90, .svg))
        let reference = directory.appendingPathComponent("rsvg.png")
        try await ReferenceTools.run(
            "rsvg-convert", package: "librsvg2-bin",
            ["-w", "800", FixtureImages.formatsDirectory.appendingPathComponent("drawing.svg").path, "-o", reference.path])
        let theirs = try Image(contentsOf: reference)
        try #require(theirs.width == 800 && theirs.height == 600)
        let their = try theirs.rgbaPixels()
        // A processor chain's resize and a thumbnail box both draw at the target's size.
        let resized = try ImageDecoder().decode(data, processedBy: ImageProcessors.Resize(width: 800, height: 800))
        let thumbnail = try Image(data: data, options: DecodingOptions(thumbnail: .init(maxPixelSize: 800)))
        let downsampled = try ImageDecoder().decode(data, processedBy: ImageProcessors.Downsample(width: 800, height: 800))
        let upscaled = try ImageProcessors.Resize(width: 800, height: 800).process(declared)
        for image in [resized, thumbnail, downsampled, upscaled] {
            try #require(image.width == 800 && image.height == 600, "\(image.width)x\(image.height)")
        }
        let drawn = Pixels.meanDifference(try resized.rgbaPixels(), their)
        let scaledUp = Pixels.meanDifference(try upscaled.rgbaPixels(), their)
        #expect(drawn < 0.5, "drawn at 800: \(drawn)")
        #expect(Pixels.meanDifference(try thumbnail.rgbaPixels(), their) < 0.5)
        #expect(Pixels.meanDifference(try downsampled.rgbaPixels(), their) < 0.5)
        #expect(scaledUp > 4 * max(drawn, 0.1), "an upscale of the 120 px drawing is visibly softer: \(scaledUp) against \(drawn)")
    }

    @Test("the first page of a PDF at the target's size is pdftoppm's")
    func pdfFirstPage() async throws {
        let directory = try ReferenceTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FixtureImages.formatsDirectory.appendingPathComponent("drawing.pdf")
        let data = try Data(contentsOf: file)
        #expect(ImageFormat(sniffing: data) == .pdf)
        let header = try ImageDecoder().header(of: data)
        #expect((header.width, header.height, header.frameCount) == (90, 68, 1), "a 90 x 67.5 pt page at 72 dpi, one page")
        let image = try ImageDecoder().decode(data, processedBy: ImageProcessors.Resize(width: 360, height: 360))
        #expect(image.format == .pdf)
        try #require(image.width == 360 && image.height == 270, "\(image.width)x\(image.height)")
        let prefix = directory.appendingPathComponent("page")
        for page in [1, 2] {
            try await ReferenceTools.run(
                "pdftoppm", package: "poppler-utils",
                ["-png", "-f", "\(page)", "-l", "\(page)", "-scale-to-x", "360", "-scale-to-y", "270", file.path, prefix.path + "\(page)"])
        }
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(pages.count == 2, "\(pages)")
        let first = try Image(contentsOf: directory.appendingPathComponent(pages[0])).rgbaPixels()
        let second = try Image(contentsOf: directory.appendingPathComponent(pages[1])).rgbaPixels()
        let ours = try image.rgbaPixels()
        #expect(Pixels.meanDifference(ours, first) < 3, "page 1: \(Pixels.meanDifference(ours, first))")
        #expect(Pixels.meanDifference(ours, second) > 20, "not page 2")
    }
}
