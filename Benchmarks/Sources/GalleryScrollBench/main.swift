import CGtk
import Foundation
import Osprey
import OspreyGTK

// Scripted fast scrolling through a grid of images, measuring the main loop's frame times from
// the frame clock. Modes: `osprey` (ImageGrid), `solid` (the same grid with solid-colour cells,
// no loading), `naive` (the bytes already in memory, `gdk_texture_new_from_bytes` on the main
// thread in bind, as adwaita-swift's Picture().data does). Prints one JSON line.
//   GalleryScrollBench MODE URLS_FILE [PIXELS_PER_FRAME=60]   (under Xvfb: see
// Benchmarks/results/2026-11-28-gallery-scroll.txt for the setup)
let arguments = CommandLine.arguments
guard arguments.count >= 3, ["osprey", "solid", "naive"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: gallery-scroll-bench osprey|solid|naive URLS_FILE [PIXELS_PER_FRAME]\n".utf8))
    exit(2)
}
let mode = arguments[1]
let urls = try String(contentsOfFile: arguments[2], encoding: .utf8).split(separator: "\n").compactMap { URL(string: String($0)) }
let speed = arguments.count > 3 ? Double(arguments[3]) ?? 60 : 60

let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-bench-\(UUID().uuidString)")
let pipeline = ImagePipeline(cache: ImageCache(name: "bench", diskConfig: DiskStorage.Config(name: "bench", directory: cacheDirectory)))

/// The bodies, fetched before the clock starts (naive mode only).
var bodies: [Data] = []
if mode == "naive" {
    bodies = urls.map { (try? Data(contentsOf: $0)) ?? Data() }
}

OspreyApplication.initialize()
let scroller: UnsafeMutablePointer<GtkWidget>
var grid: ImageGrid?
if mode == "osprey" {
    let made = ImageGrid(urls: urls, pipeline: pipeline)
    grid = made
    scroller = made.widget
} else {
    scroller = PlainGrid.make(count: urls.count, bind: mode == "solid" ? PlainGrid.solid : PlainGrid.naive)
}
let window = gtk_window_new()!
gtk_window_set_decorated(GtkWindowPointer(window), 0)
gtk_window_set_default_size(GtkWindowPointer(window), 840, 640)
gtk_window_set_child(GtkWindowPointer(window), scroller)
gtk_window_present(GtkWindowPointer(window))
let recorder = FrameRecorder(scroller: scroller, speed: speed) {
    let deltas = $0.sorted()
    let p = { (q: Double) in deltas.isEmpty ? 0 : deltas[min(deltas.count - 1, Int(Double(deltas.count) * q))] }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let line =
        "{\"mode\": \"\(mode)\", \"images\": \(urls.count), \"frames\": \(deltas.count), \"p50_ms\": \(p(0.5)), \"p99_ms\": \(p(0.99)), "
        + "\"max_ms\": \(deltas.last ?? 0), \"peak_rss_mb\": \(Double(usage.ru_maxrss) / 1024)}"
    print(line)
    fflush(nil)
    try? FileManager.default.removeItem(at: cacheDirectory)
    OspreyApplication.quit()
}
recorder.start()
OspreyApplication.run()
