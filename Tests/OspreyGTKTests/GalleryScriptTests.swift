import Foundation
import Osprey
import OspreyTestSupport
import Testing

/// The `osprey-gallery` executable run as a process in its scripted mode (`--script`), over a
/// colour origin: the JSON lines it prints and the screenshots they name. The gallery is a
/// `GtkApplication` run by `g_application_run` with no Osprey set-up call: its cells showing their
/// images proves the grid installed the main actor on GLib's loop itself.
@Suite("Gallery script", .serialized, .timeLimit(.minutes(5)))
struct GalleryScriptTests {
    /// One `{"screenshot": …, "cells": […]}` line.
    private struct Shot: Decodable {
        struct Cell: Decodable {
            var item: Int
            var url: String
            var x: Int
            var y: Int
            var width: Int
            var height: Int
        }

        var screenshot: String
        var cells: [Cell]
    }

    @Test(
        "under g_application_run with no set-up call, scrolled down and back, every visible cell shows its own item's image and each URL is downloaded once"
    )
    func scriptedScrolling() async throws {
        let gallery = try #require(
            OspreyBinary.product("osprey-gallery", environment: ["OSPREY_GALLERY"]), "osprey-gallery is not built (swift build)")
        try await MainActor.run { try GTKHarness.start() }  // a DISPLAY (Xvfb) the gallery inherits
        let origin = try await ColorImages.origin()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-gallery-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let count = 120
        let input = work.appendingPathComponent("urls.txt")
        try (0..<count).map { origin.itemURL($0).absoluteString }.joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let shots = (0..<3).map { work.appendingPathComponent("shot\($0).png").path }
        let script = "wait;screenshot:\(shots[0]);scroll:72;wait;screenshot:\(shots[1]);scroll:0;wait;screenshot:\(shots[2]);quit"
        let arguments = ["--input", input.path, "--cell", "200x150", "--cache-dir", work.appendingPathComponent("cache").path, "--script", script]
        let (status, output) = try await Self.run(gallery, arguments: arguments)
        await origin.stop()
        #expect(status == 0, "osprey-gallery exited with \(status)")

        let lines = output.split(separator: "\n").filter { $0.hasPrefix("{") }
        let decoded = try lines.map { try JSONDecoder().decode(Shot.self, from: Data($0.utf8)) }
        #expect(decoded.map(\.screenshot) == shots, "one JSON line per screenshot, in script order: \(output)")
        for shot in decoded {
            #expect(shot.cells.count >= 8, "at least two rows of cells in \(shot.screenshot)")
            try checkCells(shot, origin: origin)
        }
        guard decoded.count == 3 else { return }
        #expect(decoded[1].cells.contains { $0.item >= 72 }, "the scroll brought item 72's row into view")
        #expect(Set(decoded[2].cells.map(\.item)) == Set(decoded[0].cells.map(\.item)), "scrolling back shows the first items again")

        // Each URL was downloaded once: every shown item exactly once, nothing twice.
        let hits = origin.hitsByPath
        let repeated = hits.filter { $0.value > 1 }
        #expect(repeated.isEmpty, "downloaded more than once: \(repeated.sorted { $0.key < $1.key }.prefix(10))")
        for item in Set(decoded.flatMap { $0.cells.map(\.item) }) {
            #expect(hits["/color/\(item).png"] == 1, "item \(item) was shown, so downloaded once")
        }
    }

    /// Every cell of `shot` names its item's URL and shows the item's colour in its middle.
    private func checkCells(_ shot: Shot, origin: LoopbackOrigin) throws {
        let image = try Image(contentsOf: URL(fileURLWithPath: shot.screenshot))
        let rgba = try image.rgbaPixels()
        for cell in shot.cells {
            #expect(cell.url == origin.itemURL(cell.item).absoluteString, "cell \(cell.item) names its own URL")
            // Cells cut by the viewport's edge are listed clipped; their middle is still the picture.
            guard cell.height >= 20, cell.width >= 20 else { continue }
            let x = cell.x + cell.width / 2
            let y = cell.y + cell.height / 2
            guard x < image.width, y < image.height else {
                Issue.record("cell \(cell.item) lies outside the \(image.width)x\(image.height) screenshot")
                continue
            }
            let offset = (y * image.width + x) * 4
            let pixel = (Int(rgba[offset]), Int(rgba[offset + 1]), Int(rgba[offset + 2]))
            let expected = ColorImages.color(cell.item)
            let close = abs(pixel.0 - Int(expected.red)) <= 4 && abs(pixel.1 - Int(expected.green)) <= 4 && abs(pixel.2 - Int(expected.blue)) <= 4
            #expect(close, "\(shot.screenshot): cell of item \(cell.item) shows \(pixel), expected \(expected)")
        }
    }

    /// Runs `executable` with `arguments` to its end (killed after 120 s): its status and stdout.
    private static func run(_ executable: URL, arguments: [String]) async throws -> (Int32, String) {
        let run = try await ProcessRun.run(executable, arguments)
        return (run.status, run.output)
    }
}
