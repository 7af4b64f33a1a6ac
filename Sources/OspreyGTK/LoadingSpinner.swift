import CGtk
import Foundation

/// The loading indicator of an ``OspreyPicture``: an arc turning once a second, drawn with cairo
/// in a `GtkDrawingArea` and turned by the widget's frame clock while it spins.
///
/// Not a `GtkSpinner`: a spinning `GtkSpinner` is a CSS animation, and each one makes GTK restyle
/// and redraw it through the theme every frame: in a scrolling grid under the cairo renderer, the
/// spinners of the loading cells cost the main thread milliseconds a frame. This one costs a
/// redraw of its own 24×24 pixels a frame, and nothing while stopped (hidden, no tick callback).
@MainActor
final class LoadingSpinner {
    /// The `GtkDrawingArea`, 24×24, centred in its parent; put it in an overlay.
    let widget: UnsafeMutablePointer<GtkWidget>
    private var tick: UInt32 = 0
    private var angle = 0.0

    init() {
        widget = gtk_drawing_area_new()!
        gtk_widget_set_size_request(widget, 24, 24)
        gtk_widget_set_halign(widget, GTK_ALIGN_CENTER)
        gtk_widget_set_valign(widget, GTK_ALIGN_CENTER)
        gtk_widget_set_can_target(widget, 0)
        gtk_widget_set_visible(widget, 0)
        let draw: GtkDrawingAreaDrawFunc = { _, cairo, width, height, data in
            let spinner = Unmanaged<LoadingSpinner>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { spinner.draw(cairo!, width: Double(width), height: Double(height)) }
        }
        // The drawing area holds this object until it is finalised.
        gtk_drawing_area_set_draw_func(
            UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GtkDrawingArea.self), draw, Unmanaged.passRetained(self).toOpaque(),
            { data in Unmanaged<LoadingSpinner>.fromOpaque(data!).release() })
    }

    /// Shows the spinner and turns it on the frame clock, or stops and hides it.
    func set(spinning: Bool) {
        gtk_widget_set_visible(widget, spinning ? 1 : 0)
        if spinning, tick == 0 {
            tick = gtk_widget_add_tick_callback(
                widget,
                { _, clock, data in
                    let spinner = Unmanaged<LoadingSpinner>.fromOpaque(data!).takeUnretainedValue()
                    let time = Double(gdk_frame_clock_get_frame_time(clock)) / 1_000_000
                    MainActor.assumeIsolated { spinner.turn(to: time) }
                    return 1
                }, Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<LoadingSpinner>.fromOpaque(data!).release() })
        } else if !spinning, tick != 0 {
            gtk_widget_remove_tick_callback(widget, tick)
            tick = 0
        }
    }

    /// One turn a second, from the frame time (seconds).
    private func turn(to time: Double) {
        angle = (time.truncatingRemainder(dividingBy: 1)) * 2 * Double.pi
        gtk_widget_queue_draw(widget)
    }

    /// A grey three-quarter arc at ``angle``, with a faint full ring under it.
    private func draw(_ cairo: OpaquePointer, width: Double, height: Double) {
        let radius = min(width, height) / 2 - 2
        guard radius > 0 else { return }
        cairo_set_line_width(cairo, 2.5)
        cairo_set_source_rgba(cairo, 0.5, 0.5, 0.5, 0.25)
        cairo_arc(cairo, width / 2, height / 2, radius, 0, 2 * Double.pi)
        cairo_stroke(cairo)
        cairo_set_source_rgba(cairo, 0.5, 0.5, 0.5, 0.9)
        cairo_arc(cairo, width / 2, height / 2, radius, angle, angle + 1.5 * Double.pi)
        cairo_stroke(cairo)
    }
}
