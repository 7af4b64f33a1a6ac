import OspreyGTK

/// The gallery's window: an ``ImageGrid`` filling it, and the script runner, which takes one
/// step per frame-clock tick.
@MainActor
final class GalleryWindow {
    let window: UnsafeMutablePointer<GtkWidget>
    let grid: ImageGrid
    private var steps: [GalleryScript.Command]
    /// Frame time (microseconds) since which the grid has been idle during a `wait`.
    private var idleSince: Int64?
    /// How long a `wait` lets the grid be idle before going on: the fade's length and a little more.
    private let settleMicroseconds: Int64 = 350_000

    init(
        application: UnsafeMutablePointer<GtkApplication>, urls: [URL], cell: (width: Int, height: Int), size: (width: Int, height: Int),
        pipeline: ImagePipeline,
        script: [GalleryScript.Command]?
    ) {
        // Progressive JPEGs show their previews while they download (off by default in the library).
        grid = ImageGrid(urls: urls, cellWidth: cell.width, cellHeight: cell.height, pipeline: pipeline, options: [.progressiveJPEG()])
        // The application quits when its last window closes.
        window = gtk_application_window_new(application)!
        steps = script ?? []
        gtk_window_set_title(GtkWindowPointer(window), "Osprey gallery")
        gtk_window_set_default_size(GtkWindowPointer(window), Int32(size.width), Int32(size.height))
        // Scripted runs take screenshots of the grid alone, with no title bar.
        if script != nil { gtk_window_set_decorated(GtkWindowPointer(window), 0) }
        gtk_window_set_child(GtkWindowPointer(window), grid.widget)
        if script != nil {
            gtk_widget_add_tick_callback(
                window,
                { _, clock, data in
                    let gallery = Unmanaged<GalleryWindow>.fromOpaque(data!).takeUnretainedValue()
                    return MainActor.assumeIsolated { gallery.tick(Int64(gdk_frame_clock_get_frame_time(clock))) ? 1 : 0 }
                }, Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<GalleryWindow>.fromOpaque(data!).release() })
        }
    }

    /// What the application's `activate` makes the window of.
    static var pending:
        (urls: [URL], cell: (width: Int, height: Int), size: (width: Int, height: Int), pipeline: ImagePipeline, script: [GalleryScript.Command]?)?
    /// The window, once activated.
    private static var shown: GalleryWindow?

    /// The application's `activate`: makes and presents the window of ``pending`` (once).
    static func activate(_ application: UnsafeMutablePointer<GtkApplication>) {
        guard shown == nil, let pending else { return }
        let gallery = GalleryWindow(
            application: application, urls: pending.urls, cell: pending.cell, size: pending.size, pipeline: pending.pipeline, script: pending.script)
        shown = gallery
        gallery.present()
    }

    func present() {
        gtk_window_present(GtkWindowPointer(window))
    }

    /// Runs the next script step if it can run in this frame; returns whether to keep ticking.
    private func tick(_ time: Int64) -> Bool {
        guard let step = steps.first else { return false }
        switch step {
        case .scroll(let item):
            grid.scroll(toItem: item)
        case .wait:
            guard grid.isIdle else {
                idleSince = nil
                return true
            }
            let since = idleSince ?? time
            idleSince = since
            guard time - since >= settleMicroseconds else { return true }
            idleSince = nil
        case .screenshot(let path):
            guard WidgetSnapshot.savePNG(of: window, to: path) else { return true }
            print(screenshotLine(path: path))
            fflush(nil)
        case .quit:
            gtk_window_destroy(GtkWindowPointer(window))
            return false
        }
        steps.removeFirst()
        return true
    }

    /// `{"screenshot": PATH, "cells": [{"item": I, "url": U, "x": X, "y": Y, "width": W, "height": H}, …]}`:
    /// every cell visible in the window, its bounds clipped to the grid's viewport.
    private func screenshotLine(path: String) -> String {
        let viewport = WidgetSnapshot.bounds(of: grid.widget, in: window) ?? (0, 0, 0, 0)
        var cells: [String] = []
        for (index, picture) in grid.visibleCells.sorted(by: { $0.key < $1.key }) {
            guard let cell = WidgetSnapshot.bounds(of: picture.widget, in: window) else { continue }
            let left = max(cell.x, viewport.x)
            let top = max(cell.y, viewport.y)
            let right = min(cell.x + cell.width, viewport.x + viewport.width)
            let bottom = min(cell.y + cell.height, viewport.y + viewport.height)
            guard right - left >= 1, bottom - top >= 1 else { continue }
            cells.append(
                "{\"item\": \(index), \"url\": \(Self.quoted(grid.url(at: index)?.absoluteString ?? "")), \"x\": \(Int(left.rounded())), "
                    + "\"y\": \(Int(top.rounded())), \"width\": \(Int((right - left).rounded())), \"height\": \(Int((bottom - top).rounded()))}")
        }
        return "{\"screenshot\": \(Self.quoted(path)), \"cells\": [\(cells.joined(separator: ", "))]}"
    }

    private static func quoted(_ string: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = (try? encoder.encode(string)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
