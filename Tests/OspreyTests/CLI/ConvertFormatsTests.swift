import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// `osprey convert` with JPEG XL, SVG and PDF, and output files whose extension names no format
/// Osprey writes.
@Suite("CLI convert: JPEG XL, SVG, PDF and output extensions", .timeLimit(.minutes(5)))
final class ConvertFormatsTests {
    let workDirectory: URL

    init() throws {
        workDirectory = try ReferenceTools.temporaryDirectory()
    }

    deinit {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }
    func fixture(_ name: String) -> String { FixtureImages.formatsDirectory.appendingPathComponent(name).path }

    @Test("JPEG XL in and out: by extension and by --process format:jxl")
    func jxl() async throws {
        let png = path("from-jxl.png")
        let decoded = try await CLIRunner.run(["convert", fixture("hopper.jxl"), png])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let image = try Image(contentsOf: URL(fileURLWithPath: png))
        #expect((image.format, image.width, image.height) == (.png, 128, 128))
        let jxl = path("hopper.jxl")
        let encoded = try await CLIRunner.run(["convert", TestData.url("hopper.png").path, jxl])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        #expect(ImageFormat(sniffing: try Data(contentsOf: URL(fileURLWithPath: jxl))) == .jxl, "the .jxl file holds JPEG XL, not PNG bytes")
        let processed = path("small.out")
        let spec = try await CLIRunner.run(["convert", TestData.url("hopper.png").path, processed, "--process", "resize:64x64,format:jxl:90"])
        #expect(spec.status == 0, "\(spec.stderr)")
        let small = try Image(contentsOf: URL(fileURLWithPath: processed))
        #expect((small.format, small.width) == (.jxl, 64))
    }

    @Test("an SVG is drawn at the resize's size, a PDF's first page at its own")
    func vectors() async throws {
        let svg = path("drawing.png")
        let drawn = try await CLIRunner.run(["convert", fixture("drawing.svg"), svg, "--process", "resize:800x800"])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let image = try Image(contentsOf: URL(fileURLWithPath: svg))
        #expect((image.width, image.height) == (800, 600))
        let pdf = path("page.webp")
        let page = try await CLIRunner.run(["convert", fixture("drawing.pdf"), pdf])
        #expect(page.status == 0, "\(page.stderr)")
        let first = try Image(contentsOf: URL(fileURLWithPath: pdf))
        #expect((first.format, first.width, first.height) == (.webp, 90, 68))
    }

    @Test("an output extension that names no format Osprey writes is an error naming it; nothing is written")
    func unwritableExtension() async throws {
        for name in ["out.xyz", "out.svg", "out.pdf", "out.tif"] {
            let output = path(name)
            let result = try await CLIRunner.run(["convert", TestData.url("hopper.png").path, output])
            #expect(result.status == 64, "\(name): \(result.stderr)")
            let ext = (name as NSString).pathExtension
            #expect(result.stderr.contains(".\(ext)") && result.stderr.contains("names no format osprey writes"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let named = try await CLIRunner.run(["convert", TestData.url("hopper.png").path, path("x.png"), "--format", "svg"])
        #expect(named.status == 64 && named.stderr.contains("cannot write svg"), "\(named.stderr)")
        // --format (or a format step) decides, and the extension is not read.
        let chosen = try await CLIRunner.run(["convert", TestData.url("hopper.png").path, path("x.bin"), "--format", "jxl"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
    }
}
