import CGtk
import Foundation
import Osprey
import OspreyGTK
import OspreyTestSupport

// The offline gallery (issue 61): how long an ImageGrid takes to show every one of N images,
// page by page, when they are in the disk cache, with the network available (`warm`) and with the
// pipeline told it is unavailable (`offline`, `ImagePipeline.handleNetworkChange`). A `cold` run
// from the loopback origin fills the disk cache first; the origin then stops, so a request that
// tried the network would fail rather than be answered. Each run has a pipeline of its own over
// the same disk directory (an empty memory cache) and a new window. Prints one JSON line per run:
// the time to show every page, the pages that did not show within 30 s (`timeouts`), the cells
// that failed, and the origin's downloads. A last `offline-expired` run reads the disk with a
// clock 8 days on, past every entry's expiry: offline, expired entries are shown too.
//   GalleryOfflineBench IMAGES_DIR [ITEMS=500] [ROUNDS=3]   (under Xvfb: Benchmarks/gallery_offline.sh)
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: GalleryOfflineBench IMAGES_DIR [ITEMS] [ROUNDS]\n".utf8))
    exit(2)
}
let items = arguments.count > 2 ? Int(arguments[2]) ?? 500 : 500
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3

/// A task's result, handed to the thread waiting for it. `@unchecked Sendable`: written once by
/// the task before it signals the semaphore, read after the wait.
final class Outcome<T>: @unchecked Sendable { var result: Result<T, any Error>? }

/// `body`'s value, waited for on this thread: the main thread must stay GLib's (no top-level
/// `await`, which would hand it to Dispatch).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

OspreyApplication.initialize()
let imagesDirectory = URL(fileURLWithPath: arguments[1])
let origin = try blocking { try await LoopbackOrigin.start(directories: [imagesDirectory]) }
// As Benchmarks/gallery_scroll.sh: every 10th item a 4000x3000 JPEG, the others 640x480, each under its own URL.
let urls = (0..<items).map { item in
    let name = item % 10 == 0 ? "L\((item / 10) % 60).jpg" : "s\(item % 20).jpg"
    return origin.url("/\(name)?item=\(item)")
}
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-offline-bench-\(UUID().uuidString)")

/// Runs GLib's main loop until `done` holds or `limit` seconds pass; returns whether it held.
@MainActor func pump(seconds limit: Double, until done: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(limit)
    while Date() < deadline {
        while g_main_context_iteration(nil, 0) != 0 {}
        if done() { return true }
        usleep(200)
    }
    return false
}

/// The pictures GTK shows now under `widget` (mapped and child-visible), and how many have a texture.
@MainActor func shownCells(_ widget: UnsafeMutablePointer<GtkWidget>) -> (visible: Int, shown: Int) {
    var counts = (visible: 0, shown: 0)
    var child = gtk_widget_get_first_child(widget)
    while let current = child {
        if let picture = OspreyPicture.of(current) {
            if gtk_widget_get_mapped(current) != 0 && gtk_widget_get_child_visible(current) != 0 {
                counts.visible += 1
                if picture.texture != nil { counts.shown += 1 }
            }
        } else {
            let inner = shownCells(current)
            counts = (counts.visible + inner.visible, counts.shown + inner.shown)
        }
        child = gtk_widget_get_next_sibling(current)
    }
    return counts
}

/// One run: a new pipeline over the disk directory, a grid of `urls` in a new window, scrolled a
/// page at a time once every visible cell shows an image.
@MainActor func run(_ phase: String) -> Double {
    // `offline-expired`: the disk storage's clock 8 days on, past every entry's expiry (7 days).
    let shift: TimeInterval = phase == "offline-expired" ? 8 * 86_400 : 0
    let disk = DiskStorage.Config(name: "offline", directory: directory, now: { Date().addingTimeInterval(shift) })
    let pipeline = ImagePipeline(cache: ImageCache(name: "offline-bench", diskConfig: disk))
    if phase.hasPrefix("offline") { pipeline.handleNetworkChange(available: false, metered: false) }
    let downloadsBefore = origin.bodiesServed
    let grid = ImageGrid(urls: urls, pipeline: pipeline)
    var failures = 0
    grid.onCellFailure = { _, _, _ in failures += 1 }
    let start = Date()
    let window = gtk_window_new()!
    gtk_window_set_decorated(GtkWindowPointer(window), 0)
    gtk_window_set_default_size(GtkWindowPointer(window), 840, 640)
    gtk_window_set_child(GtkWindowPointer(window), grid.widget)
    gtk_window_present(GtkWindowPointer(window))
    let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(grid.widget))!
    var (pages, timeouts) = (0, 0)
    while true {
        // A frame at least: the grid lays out (and binds) the cells of a new position on a frame.
        let clock = gtk_widget_get_frame_clock(grid.widget)
        let frame = clock.map { gdk_frame_clock_get_frame_counter($0) } ?? 0
        let shown = pump(seconds: 30) {
            guard let clock, gdk_frame_clock_get_frame_counter(clock) > frame else {
                gtk_widget_queue_draw(grid.widget)
                return false
            }
            let cells = shownCells(grid.widget)
            return cells.visible > 0 && cells.shown == cells.visible
        }
        pages += 1
        if !shown { timeouts += 1 }
        let value = gtk_adjustment_get_value(adjustment)
        let end = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
        if value >= end - 0.5 { break }
        gtk_adjustment_set_value(adjustment, min(end, value + gtk_adjustment_get_page_size(adjustment)))
    }
    let milliseconds = Date().timeIntervalSince(start) * 1000
    print(
        "{\"phase\": \"\(phase)\", \"images\": \(items), \"pages\": \(pages), \"ms\": \(Int(milliseconds)), \"timeouts\": \(timeouts), "
            + "\"failed_cells\": \(failures), \"downloads\": \(origin.bodiesServed - downloadsBefore)}")
    fflush(nil)
    gtk_window_destroy(GtkWindowPointer(window))
    // The cold run's disk writes run in the background: let them land before the next run.
    _ = pump(seconds: phase == "cold" ? 3 : 0.2) { false }
    return milliseconds
}

_ = run("cold")
try blocking { await origin.stop() }
var times: [String: [Double]] = ["warm": [], "offline": []]
for _ in 0..<rounds {
    for phase in ["warm", "offline"] { times[phase, default: []].append(run(phase)) }
}
// Last: every entry expired by the disk's clock, still shown offline (issue 61), and kept.
_ = run("offline-expired")
let median = { (values: [Double]) in values.sorted()[values.count / 2] }
let warm = median(times["warm"] ?? [0]), offline = median(times["offline"] ?? [0])
print(
    "{\"summary\": true, \"warm_median_ms\": \(Int(warm)), \"offline_median_ms\": \(Int(offline)), "
        + "\"ratio_offline_warm\": \((offline / max(1, warm) * 100).rounded() / 100)}")
try? FileManager.default.removeItem(at: directory)
