import CGtk
import Foundation

/// Scrolls `speed` pixels per frame from the top to the bottom of `scroller`, recording the time
/// between frames (frame clock), then calls `done` with the intervals in milliseconds.
@MainActor
final class FrameRecorder {
    private let scroller: UnsafeMutablePointer<GtkWidget>
    private let speed: Double
    private let done: ([Double]) -> Void
    private let started: () -> Void
    private var last: Int64 = 0
    private var deltas: [Double] = []
    private var warmup = 30

    /// `started` runs at the first measured frame, `done` after the last.
    init(scroller: UnsafeMutablePointer<GtkWidget>, speed: Double, started: @escaping () -> Void = {}, done: @escaping ([Double]) -> Void) {
        self.scroller = scroller
        self.started = started
        self.speed = speed
        self.done = done
    }

    func start() {
        gtk_widget_add_tick_callback(
            scroller,
            { _, clock, data in
                let recorder = Unmanaged<FrameRecorder>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { recorder.tick(Int64(gdk_frame_clock_get_frame_time(clock))) ? 1 : 0 }
            }, Unmanaged.passRetained(self).toOpaque(), nil)
    }

    private func tick(_ time: Int64) -> Bool {
        if warmup > 0 {
            warmup -= 1
            last = time
            if warmup == 0 { started() }
            return true
        }
        deltas.append(Double(time - last) / 1000)
        last = time
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(scroller))!
        let value = gtk_adjustment_get_value(adjustment)
        let end = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
        if value >= end - 0.5 {
            done(deltas)
            return false
        }
        gtk_adjustment_set_value(adjustment, min(end, value + speed))
        return true
    }
}
