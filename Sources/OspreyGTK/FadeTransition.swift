import CGtk
import Osprey

extension ImageTransition where Target == OspreyPicture {
    /// Shows the new texture and fades it in from transparent over `duration` seconds (default
    /// 0.25), driven by the widget's frame clock, so it pauses while the widget is not drawn.
    public static func fade(duration: Double = 0.25) -> ImageTransition<OspreyPicture> {
        ImageTransition { picture, texture in
            picture.display(texture)
            guard duration > 0, picture.isAlive else { return }
            FadeAnimation(widget: picture.picture, duration: duration).start()
        }
    }
}

/// One fade-in on the frame clock: opacity from 0 to 1 over `duration`, then the tick callback ends.
@MainActor
final class FadeAnimation {
    private let widget: UnsafeMutablePointer<GtkWidget>
    private let duration: Double
    private var startTime: Int64 = 0

    init(widget: UnsafeMutablePointer<GtkWidget>, duration: Double) {
        self.widget = widget
        self.duration = duration
    }

    func start() {
        gtk_widget_set_opacity(widget, 0)
        gtk_widget_add_tick_callback(
            widget,
            { _, clock, data in
                let fade = Unmanaged<FadeAnimation>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { fade.tick(Int64(gdk_frame_clock_get_frame_time(clock))) ? 1 : 0 }
            }, Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<FadeAnimation>.fromOpaque(data!).release() })
    }

    /// Sets the opacity for `time` (microseconds); returns whether to keep ticking.
    private func tick(_ time: Int64) -> Bool {
        if startTime == 0 { startTime = time }
        let progress = min(1, Double(time - startTime) / (duration * 1_000_000))
        // Another display (a newer image) sets full opacity; a fade never lowers it again.
        if gtk_widget_get_opacity(widget) < progress || progress >= 1 { gtk_widget_set_opacity(widget, progress) }
        return progress < 1
    }
}
