import ArgumentParser
import Foundation

/// `osprey-gallery`'s command line.
struct GalleryOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "osprey-gallery", abstract: "A scrolling grid of remote images, loaded by Osprey into GTK 4 widgets.")

    @Option(help: ArgumentHelp("A file of image URLs, one a line, or a folder of images.", valueName: "FILE"))
    var input: String

    @Option(help: ArgumentHelp("The cell size in points (default 200x150).", valueName: "WxH"))
    var cell: String = "200x150"

    @Option(name: .customLong("cache-dir"), help: ArgumentHelp("The cache directory (default: the user cache).", valueName: "DIR"))
    var cacheDirectory: String?

    @Option(help: ArgumentHelp("The window size in points (default 840x640).", valueName: "WxH"))
    var window: String = "840x640"

    @Option(
        help: ArgumentHelp(
            "Commands separated by ';': scroll:ITEM, wait, screenshot:PATH, quit. After each screenshot one JSON line.",
            valueName: "SCRIPT"))
    var script: String?

    func validate() throws {
        _ = try size(cell, "--cell")
        _ = try size(window, "--window")
        if let script { _ = try GalleryScript.parse(script) }
    }

    func size(_ text: String, _ name: String) throws -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { throw ValidationError("\(name) must be WxH, got \(text)") }
        return (parts[0], parts[1])
    }

    /// The image URLs: the lines of the file, or the images of the folder in name order.
    func urls() throws -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
            throw ValidationError("--input \(input) does not exist")
        }
        if isDirectory.boolValue {
            let names = try FileManager.default.contentsOfDirectory(atPath: input).sorted()
            return names.filter { !$0.hasPrefix(".") }.map { URL(fileURLWithPath: input).appendingPathComponent($0) }
        }
        let lines = try String(contentsOfFile: input, encoding: .utf8).split(whereSeparator: \.isNewline)
        return lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }.compactMap(URL.init(string:))
    }
}
