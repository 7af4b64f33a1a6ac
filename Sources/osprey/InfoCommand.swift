import ArgumentParser
import Foundation
import Osprey

/// `osprey info <file> [--json]`: what an image file holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print an image's format, size, frames, orientation and alpha.",
        discussion: "The whole file is validated (decoded at a small size), so damaged files fail with exit code 65."
    )

    @Argument(help: "The image file.")
    var file: String

    @Flag(help: "Print one JSON object instead of lines.")
    var json = false

    struct Report: Codable {
        var format: String
        var width: Int
        var height: Int
        var frames: Int
        var orientation: Int
        var hasAlpha: Bool
        var fileBytes: Int
    }

    func run() throws {
        do {
            let url = URL(fileURLWithPath: file)
            let data = try ImageDecoder.readFile(url)
            let header = try ImageDecoder().header(of: data)
            // Validate every byte cheaply: a small decode reads the whole stream.
            _ = try ImageDecoder(options: DecodingOptions(thumbnail: .init(maxPixelSize: 32))).decode(data)
            let report = Report(
                format: header.format.rawValue, width: header.width, height: header.height,
                frames: header.frameCount, orientation: header.orientation.rawValue,
                hasAlpha: header.hasAlpha, fileBytes: data.count)
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
                    """)
            }
        } catch {
            throw CommandFailure.report(error)
        }
    }
}
