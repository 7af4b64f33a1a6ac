import CGtk
import Foundation
import OspreyGTK
import OspreyTestSupport
import Testing

/// GTK for the tests: an X display (Xvfb on a free display number when `DISPLAY` is not set; it
/// ends when the test process, its only client, disconnects at exit: `-terminate`), GTK initialised once on the main actor, and a pump that
/// runs GLib's main context until a condition holds.
@MainActor
enum GTKHarness {
    private static var started = false

    /// Starts GTK, then runs `body` with a colour origin and a pipeline over a fresh cache
    /// directory (cache `name`), both torn down afterwards.
    static func withOrigin(_ name: String, _ body: (LoopbackOrigin, ImagePipeline) async throws -> Void) async throws {
        try start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-\(name)-\(UUID().uuidString)")
        let origin = try await ColorImages.origin()
        let pipeline = ImagePipeline(cache: ImageCache(name: name, diskConfig: DiskStorage.Config(name: name, directory: directory)))
        do {
            try await body(origin, pipeline)
        } catch {
            await origin.stop()
            throw error
        }
        await origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the display and GTK once; throws when neither a display nor Xvfb is available.
    static func start() throws {
        guard !started else { return }
        setenv("GDK_BACKEND", "x11", 1)
        setenv("GSK_RENDERER", "cairo", 1)
        setenv("GSETTINGS_BACKEND", "memory", 1)
        setenv("NO_AT_BRIDGE", "1", 1)
        if (ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty { try startXvfb() }
        guard gtk_init_check() != 0 else { throw HarnessError(message: "gtk_init_check failed on DISPLAY=\(String(cString: getenv("DISPLAY")))") }
        started = true
    }

    private static func startXvfb() throws {
        guard let xvfb = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw HarnessError(message: "no DISPLAY and no Xvfb (apt-get install xvfb)")
        }
        // A display number no other server holds (its lock file and socket are absent).
        guard
            let number = (90..<190).first(where: {
                !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock") && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
            })
        else { throw HarnessError(message: "no free X display number in 90..<190") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: xvfb)
        process.arguments = [":\(number)", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-terminate"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Xvfb is ready when its socket exists (bounded: 20 s).
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") {
            guard process.isRunning else { throw HarnessError(message: "Xvfb :\(number) exited at start") }
            usleep(50_000)
        }
        setenv("DISPLAY", ":\(number)", 1)
    }

    /// Runs GLib's default context (and lets main-actor jobs run) until `condition` holds;
    /// returns whether it did within `limit` (default 60 seconds). Past it, an issue naming `what`
    /// is recorded and `false` returned: a broken test fails instead of hanging.
    @discardableResult
    static func pump(_ what: String, within limit: Duration = .seconds(60), until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            while g_main_context_iteration(nil, 0) != 0 {}
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        if condition() { return true }
        Issue.record(DeadlineExceeded(what: what, limit: limit))
        return false
    }

    /// Runs GLib's default context for `frames` frames of `widget`'s frame clock (each one asked
    /// for with a redraw).
    static func pumpFrames(_ frames: Int, of widget: UnsafeMutablePointer<GtkWidget>) async {
        guard let clock = gtk_widget_get_frame_clock(widget) else { return }
        for _ in 0..<frames {
            let start = gdk_frame_clock_get_frame_counter(clock)
            gtk_widget_queue_draw(widget)
            await pump("frame \(start + 1) of the frame clock") { gdk_frame_clock_get_frame_counter(clock) > start }
        }
    }

    /// A new window of `width`×`height` showing `child`, presented and drawn once.
    static func window(_ child: UnsafeMutablePointer<GtkWidget>, width: Int, height: Int) async -> UnsafeMutablePointer<GtkWidget> {
        let window = gtk_window_new()!
        gtk_window_set_decorated(GtkWindowPointer(window), 0)
        gtk_window_set_default_size(GtkWindowPointer(window), Int32(width), Int32(height))
        gtk_window_set_child(GtkWindowPointer(window), child)
        gtk_window_present(GtkWindowPointer(window))
        await pump("the window to map and draw its child") {
            gtk_widget_get_mapped(child) != 0 && gtk_widget_get_width(child) > 0 && WidgetSnapshot.texture(of: window) != nil
        }
        await pumpFrames(2, of: window)
        return window
    }

    /// The RGB of `widget`'s pixel at its centre, as rendered now (no main-loop turn).
    static func centrePixel(of widget: UnsafeMutablePointer<GtkWidget>, in window: UnsafeMutablePointer<GtkWidget>) -> (Int, Int, Int)? {
        guard let bounds = WidgetSnapshot.bounds(of: widget, in: window) else { return nil }
        return pixel(of: window, x: Int(bounds.x + bounds.width / 2), y: Int(bounds.y + bounds.height / 2))
    }

    /// The RGB of `window`'s pixel at (`x`, `y`), as rendered now.
    static func pixel(of window: UnsafeMutablePointer<GtkWidget>, x: Int, y: Int) -> (Int, Int, Int)? {
        guard let texture = WidgetSnapshot.texture(of: window), x >= 0, y >= 0, x < texture.width, y < texture.height else { return nil }
        let rgba = WidgetSnapshot.rgba(of: texture)
        let offset = (y * texture.width + x) * 4
        return (Int(rgba[offset]), Int(rgba[offset + 1]), Int(rgba[offset + 2]))
    }

    /// Whether two colours are within `tolerance` per channel.
    static func close(_ a: (Int, Int, Int)?, _ b: (red: UInt8, green: UInt8, blue: UInt8), tolerance: Int = 4) -> Bool {
        guard let a else { return false }
        return abs(a.0 - Int(b.red)) <= tolerance && abs(a.1 - Int(b.green)) <= tolerance && abs(a.2 - Int(b.blue)) <= tolerance
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
