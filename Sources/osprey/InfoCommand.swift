import ArgumentParser
import Foundation
import Osprey

/// `osprey info <file> [--json]`: what an image file holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print an image's format, size, frames, orientation, alpha and placeholder hashes.",
        discussion: """
            The whole file is validated (decoded at a small size), so damaged files fail with exit code 65. \
            The ThumbHash (base64) and BlurHash (4x3 components unless --blurhash-components says otherwise) \
            are computed from the first frame shrunk into 100x100, as their reference encoders expect.
            """
    )

    @Argument(help: "The image file.")
    var file: String

    @Flag(help: "Print one JSON object instead of lines.")
    var json = false

    @Option(help: "BlurHash components as XxY, each 1...9.")
    var blurhashComponents = "4x3"

    struct Report: Codable {
        var format: String
        var width: Int
        var height: Int
        var frames: Int
        var orientation: Int
        var hasAlpha: Bool
        var fileBytes: Int
        /// The ThumbHash in its base64 string form.
        var thumbhash: String
        /// The BlurHash with `--blurhash-components` components (default 4x3).
        var blurhash: String
    }

    func run() throws {
        do {
            let url = URL(fileURLWithPath: file)
            let data = try ImageDecoder.readFile(url)
            let header = try ImageDecoder().header(of: data)
            // Validate every byte cheaply: a small decode reads the whole stream. 100 pixels is
            // what the placeholder hashes are computed at (their reference encoders' limit).
            let small = try ImageDecoder(options: DecodingOptions(thumbnail: .init(maxPixelSize: ThumbHash.maxInputSide))).decode(data)
            let (componentsX, componentsY) = components ?? (BlurHash.defaultComponentsX, BlurHash.defaultComponentsY)
            let report = Report(
                format: header.format.rawValue, width: header.width, height: header.height,
                frames: header.frameCount, orientation: header.orientation.rawValue,
                hasAlpha: header.hasAlpha, fileBytes: data.count, thumbhash: try ThumbHash(image: small).string,
                blurhash: try BlurHash(image: small, componentsX: componentsX, componentsY: componentsY).string)
            if json {
                print(try JSONLine.string(report))
            } else {
                print(
                    """
                    format: \(report.format)
                    width: \(report.width)
                    height: \(report.height)
                    frames: \(report.frames)
                    orientation: \(report.orientation)
                    has-alpha: \(report.hasAlpha)
                    file-bytes: \(report.fileBytes)
                    thumbhash: \(report.thumbhash)
                    blurhash: \(report.blurhash)
                    """)
            }
        } catch {
            throw CommandFailure.report(error)
        }
    }

    /// `--blurhash-components` as two counts, or `nil` when it is not `XxY` with each in 1...9.
    private var components: (x: Int, y: Int)? {
        let parts = blurhashComponents.lowercased().split(separator: "x")
        guard parts.count == 2, let x = Int(parts[0]), let y = Int(parts[1]), (1...9).contains(x), (1...9).contains(y) else { return nil }
        return (x, y)
    }

    func validate() throws {
        guard components != nil else {
            throw ValidationError("--blurhash-components must be XxY with X and Y in 1...9 (e.g. 4x3), not \"\(blurhashComponents)\"")
        }
    }
}
