import COspreyVips
import Foundation
import Testing

@testable import Osprey

@Suite("CLI info and convert", .timeLimit(.minutes(5)))
final class CLITests {
    let workDirectory: URL

    init() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    @Test("info prints the header fields, as lines or JSON")
    func info() async throws {
        let lines = try await CLIRunner.run(["info", TestData.url("hopper_orientation_6.jpg").path])
        #expect(lines.status == 0)
        #expect(lines.stdout.contains("format: jpeg"))
        #expect(lines.stdout.contains("orientation: 6"))
        #expect(lines.stdout.contains("file-bytes: 4951"))
        let json = try await CLIRunner.run(["info", "--json", TestData.url("iss634.gif").path])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["format"] as? String == "gif")
        #expect(object["frames"] as? Int == 42)
        #expect(object["width"] as? Int == 245)
        #expect(object["hasAlpha"] as? Bool == true)
        #expect(object["fileBytes"] as? Int == 277517)
    }

    @Test("convert processes, picks the format and writes the file")
    func convert() async throws {
        let output = path("card.png")
        let result = try await CLIRunner.run([
            "convert", TestData.url("rocket.jpg").path, output,
            "--process", "resize:200x200:fill,blur:2,round:12,format:webp:80"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let image = try Image(contentsOf: URL(fileURLWithPath: output))
        #expect(image.format == .webp, "the spec's format wins over the extension")
        #expect((image.width, image.height) == (200, 200))
        let thumb = path("thumb.jpg")
        #expect(try await CLIRunner.run(["convert", TestData.url("retina.jpg").path, thumb, "--thumbnail", "100", "--quality", "50"]).status == 0)
        let thumbImage = try Image(contentsOf: URL(fileURLWithPath: thumb))
        #expect(thumbImage.format == .jpeg && thumbImage.width == 100)
        let gif = path("anim.out")
        #expect(
            try await CLIRunner.run(["convert", TestData.url("iss634.gif").path, gif, "--format", "gif", "--process", "resize:64x64"]).status == 0)
        #expect(try Image(contentsOf: URL(fileURLWithPath: gif)).frameCount == 42)
    }

    @Test("undecodable input: exit 65, one error line, nothing written")
    func undecodable() async throws {
        let original = try TestData.data("hopper.png")
        let truncated = path("truncated.png")
        try original.prefix(original.count / 2).write(to: URL(fileURLWithPath: truncated))
        let text = path("text.jpg")
        try Data("not an image at all".utf8).write(to: URL(fileURLWithPath: text))
        let bomb = path("bomb.tif")
        try BadInputTests.tiffBomb(width: 100_000, height: 100_000).write(to: URL(fileURLWithPath: bomb))
        for input in [truncated, text, bomb] {
            let output = path("out-\(UUID().uuidString).png")
            for arguments in [["convert", input, output], ["info", input]] {
                let result = try await CLIRunner.run(arguments)
                #expect(!result.crashed)
                #expect(result.status == 65, "\(arguments): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1)
                #expect(lines.first?.hasPrefix("error: ") == true)
                #expect(!FileManager.default.fileExists(atPath: output))
            }
        }
    }

    @Test(
        "a WebP declaring 16383 x 16383 is refused as too large within 900 MB of address space",
        .enabled(if: CLIRunner.canLimitAddressSpace, "needs prlimit, and no thread sanitizer (its shadow memory needs more)"))
    func webpSizeLieUnderAddressSpaceLimit() async throws {
        // libvips 8.14's webpload maps the canvas a header declares while reading the header; the
        // decoder reads the declared size with libwebp first. Without that, this run fails on
        // "vips_tracked: out of memory" instead.
        let lie = path("lie.webp")
        try BadInputTests.webpSizeLie().write(to: URL(fileURLWithPath: lie))
        let result = try await CLIRunner.run(["convert", lie, path("out.jpg")], addressSpaceLimit: 900_000_000)
        #expect(!result.crashed)
        #expect(result.status == 65)
        #expect(result.stderr.contains("16383x16383 pixels x 1 frame(s) exceeds the limit of 50000000 pixels"), "\(result.stderr)")
        let control = try await CLIRunner.run(["convert", TestData.url("hopper.webp").path, path("ok.jpg")], addressSpaceLimit: 900_000_000)
        #expect(control.status == 0, "a good WebP converts under the same limit: \(control.stderr)")
    }

    /// The install prefix of libvips' module directory on this machine (Debian's libvips 8.14 has
    /// one), or nil.
    static var vipsModulePrefix: String? {
        let layouts = [
            ("/usr", "/usr/lib/x86_64-linux-gnu"), ("/usr", "/usr/lib/aarch64-linux-gnu"), ("/usr", "/usr/lib64"),
            ("/usr", "/usr/lib"), ("/usr/local", "/usr/local/lib")
        ]
        let version = "\(vips_version(0)).\(vips_version(1))"
        return layouts.first { FileManager.default.fileExists(atPath: "\($0.1)/vips-modules-\(version)") }?.0
    }

    @Test(
        "libvips' modules load when a format needs them: none for a PNG, heif for an AVIF; all under a user's VIPSHOME",
        .enabled(if: vipsModulePrefix != nil, "this libvips has no loadable modules"))
    func vipsModulesLoadOnDemand() async throws {
        // glibc's loader lists every library it opens under LD_DEBUG=files.
        func convert(_ name: String, _ output: String, environment: [String: String] = [:]) async throws -> (ok: Bool, modules: Set<String>) {
            let result = try await CLIRunner.run(
                ["convert", TestData.url(name).path, path(output)], environment: environment.merging(["LD_DEBUG": "files"]) { $1 })
            let modules = Set(
                result.stderr.split(separator: "\n").compactMap { line -> String? in
                    guard let range = line.range(of: #"vips-modules-[0-9.]+/vips-([a-z]+)\.so"#, options: .regularExpression) else { return nil }
                    return String(line[range].split(separator: "/").last!.dropFirst(5).dropLast(3))
                })
            return (result.status == 0 && !result.crashed, modules)
        }
        let png = try await convert("coffee.png", "coffee.jpg")
        #expect(png.ok)
        #expect(png.modules.isEmpty, "a PNG loads no libvips module: \(png.modules)")
        let avif = try await convert("hopper.avif", "hopper.png")
        #expect(avif.ok)
        #expect(avif.modules == ["heif"], "an AVIF loads only heif: \(avif.modules)")
        let user = try await convert("coffee.png", "user.jpg", environment: ["VIPSHOME": Self.vipsModulePrefix ?? "/usr"])
        #expect(user.ok)
        #expect(user.modules.isSuperset(of: ["heif", "magick"]), "a user's VIPSHOME gets libvips' own start: \(user.modules)")
    }

    @Test("usage errors exit 64; a missing input exits 66")
    func usageErrors() async throws {
        let input = TestData.url("hopper.jpg").path
        for arguments in [
            ["convert", input], ["convert", input, path("x.png"), "--process", "bogus:1"],
            ["convert", input, path("x.png"), "--quality", "0"], ["convert", input, path("x.png"), "--format", "svg"],
            ["info"], ["frobnicate"]
        ] {
            let result = try await CLIRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(!result.crashed)
        }
        #expect(!FileManager.default.fileExists(atPath: path("x.png")))
        let missing = try await CLIRunner.run(["info", path("missing.png")])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("error: cannot read"))
    }

    @Test("a processor that cannot apply exits 65 and writes nothing")
    func processorFailure() async throws {
        let output = path("crop.png")
        let result = try await CLIRunner.run(["convert", TestData.url("hopper.jpg").path, output, "--process", "crop:10x10:900:900"])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("error: invalid argument to processor crop:10x10:900:900"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
