import CGtk
import Foundation
import Osprey
import OspreyGTK

#if canImport(FoundationNetworking)
    // `Data(contentsOf:)` of an http URL (the naive and decoded modes read the bytes before the clock).
    import FoundationNetworking
#endif

// Scripted fast scrolling through a grid of images, measuring the main loop's frame times from
// the frame clock. Modes: `osprey` (ImageGrid), `solid` (the same grid with solid-colour cells,
// no loading), `naive` (the bytes already in memory, `gdk_texture_new_from_bytes` on the main
// thread in bind, as adwaita-swift's Picture().data does), `decoded` (textures of the cell size
// made from every image before the clock starts, shown in bind: the cost of drawing the images
// with no loading at all). Prints one JSON line.
//   GalleryScrollBench MODE URLS_FILE [PIXELS_PER_FRAME=60]   (under Xvfb: see
// Benchmarks/results/2026-12-05-gallery-scroll.txt for the setup)
let arguments = CommandLine.arguments
guard arguments.count >= 3, ["osprey", "solid", "naive", "decoded"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: gallery-scroll-bench osprey|solid|naive|decoded URLS_FILE [PIXELS_PER_FRAME]\n".utf8))
    exit(2)
}
let mode = arguments[1]
let urls = try String(contentsOfFile: arguments[2], encoding: .utf8).split(separator: "\n").compactMap { URL(string: String($0)) }
let speed = arguments.count > 3 ? Double(arguments[3]) ?? 60 : 60

// First, as in every GTK program: pipelines made after it decode below the main thread's priority.
OspreyApplication.initialize()
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-bench-\(UUID().uuidString)")
let pipeline = ImagePipeline(cache: ImageCache(name: "bench", diskConfig: DiskStorage.Config(name: "bench", directory: cacheDirectory)))

/// The bodies, fetched before the clock starts (naive mode only).
var bodies: [Data] = []
if mode == "naive" {
    bodies = urls.map { (try? Data(contentsOf: $0)) ?? Data() }
}

if mode == "decoded" {
    // One texture per distinct file (the URLs differ by their query only), downsampled to the cell.
    var made: [String: Texture] = [:]
    let downsample = ImageProcessors.Composition.downsample(width: 200, height: 150)
    PlainGrid.decodedTextures = urls.map { url in
        let file = url.path
        if let texture = made[file] { return texture }
        let image = try! downsample.process(Image(data: Data(contentsOf: url)))
        let texture = Texture(image: image)!
        made[file] = texture
        return texture
    }
}
let scroller: UnsafeMutablePointer<GtkWidget>
var grid: ImageGrid?
if mode == "osprey" {
    // GALLERY_BENCH_PLAIN=1: no spinner and no fade, to tell their cost from the loading's;
    // `fade` or `spinner`: only that one.
    let plain = ProcessInfo.processInfo.environment["GALLERY_BENCH_PLAIN"] ?? ""
    let settings: TargetSettings<OspreyPicture>? =
        switch plain {
        case "1": TargetSettings()
        case "fade": TargetSettings(transition: .fade())
        case "spinner": TargetSettings(indicator: OspreyPicture.spinner)
        default: nil
        }
    let made = settings.map { ImageGrid(urls: urls, pipeline: pipeline, settings: $0) } ?? ImageGrid(urls: urls, pipeline: pipeline)
    grid = made
    scroller = made.widget
} else {
    scroller = PlainGrid.make(count: urls.count, bind: mode == "solid" ? PlainGrid.solid : mode == "decoded" ? PlainGrid.decoded : PlainGrid.naive)
}
let window = gtk_window_new()!
gtk_window_set_decorated(GtkWindowPointer(window), 0)
gtk_window_set_default_size(GtkWindowPointer(window), 840, 640)
gtk_window_set_child(GtkWindowPointer(window), scroller)
gtk_window_present(GtkWindowPointer(window))
/// The main thread's CPU time and time spent runnable but waiting for a core (ms), from
/// /proc/thread-self/schedstat: where a slow frame's time went when the main thread was not running.
func mainThreadSchedule() -> (cpu: Double, waiting: Double) {
    let fields = ((try? String(contentsOfFile: "/proc/thread-self/schedstat", encoding: .utf8)) ?? "").split(separator: " ")
    guard fields.count >= 2, let cpu = Double(fields[0]), let waiting = Double(fields[1]) else { return (0, 0) }
    return (cpu / 1e6, waiting / 1e6)
}
/// The origin's GET requests so far, from its log (`GALLERY_ORIGIN_LOG`), -1 without one.
func originRequests() -> Int {
    guard let path = ProcessInfo.processInfo.environment["GALLERY_ORIGIN_LOG"],
        let log = try? String(contentsOfFile: path, encoding: .utf8)
    else { return -1 }
    return log.split(separator: "\n").filter { $0.hasPrefix("GET ") }.count
}
var scheduleAtStart = (cpu: 0.0, waiting: 0.0)
// The log is the origin's for the whole script: requests before this run are not its own.
let requestsBeforeRun = originRequests()
var downloadsBeforeScroll = -1
let recorder = FrameRecorder(
    scroller: scroller, speed: speed,
    started: {
        scheduleAtStart = mainThreadSchedule()
        downloadsBeforeScroll = originRequests() - requestsBeforeRun
    }
) {
    let deltas = $0.sorted()
    let p = { (q: Double) in deltas.isEmpty ? 0 : deltas[min(deltas.count - 1, Int(Double(deltas.count) * q))] }
    let schedule = mainThreadSchedule()
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let line =
        "{\"mode\": \"\(mode)\", \"images\": \(urls.count), \"frames\": \(deltas.count), \"p50_ms\": \(p(0.5)), \"p99_ms\": \(p(0.99)), "
        + "\"max_ms\": \(deltas.last ?? 0), \"peak_rss_mb\": \(Double(usage.ru_maxrss) / 1024), "
        + "\"main_cpu_ms\": \(Int(schedule.cpu - scheduleAtStart.cpu)), \"main_waiting_ms\": \(Int(schedule.waiting - scheduleAtStart.waiting)), "
        + "\"total_ms\": \(Int($0.reduce(0, +))), \"downloads_before_scroll\": \(downloadsBeforeScroll)}"
    print(line)
    fflush(nil)
    try? FileManager.default.removeItem(at: cacheDirectory)
    OspreyApplication.quit()
}
recorder.start()
OspreyApplication.run()
