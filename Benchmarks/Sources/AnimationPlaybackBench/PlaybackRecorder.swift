import CGtk
import Foundation
import OspreyGTK

/// Watches an ``AnimationPlayer`` on the frame clock of its widget: every tick's frame time and
/// every frame put on screen (the player's `lastChangeTime`), for `seconds` of frame-clock time
/// after `warmup` ticks; then calls `done`.
@MainActor
final class PlaybackRecorder {
    /// A frame put on screen: its index and the frame-clock time (µs) it was shown at.
    struct Shown {
        var frame: Int
        var time: Int64
    }

    private(set) var ticks: [Int64] = []
    private(set) var shown: [Shown] = []
    private let player: AnimationPlayer
    private let seconds: Double
    private let started: () -> Void
    private let done: () -> Void
    private var warmup = 30
    private var start: Int64?
    private var lastChange: Int64?

    init(player: AnimationPlayer, seconds: Double, started: @escaping () -> Void, done: @escaping () -> Void) {
        self.player = player
        self.seconds = seconds
        self.started = started
        self.done = done
    }

    func start(on widget: UnsafeMutablePointer<GtkWidget>) {
        gtk_widget_add_tick_callback(
            widget,
            { _, clock, data in
                let recorder = Unmanaged<PlaybackRecorder>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { recorder.tick(Int64(gdk_frame_clock_get_frame_time(clock))) ? 1 : 0 }
            }, Unmanaged.passRetained(self).toOpaque(), nil)
    }

    private func tick(_ time: Int64) -> Bool {
        if warmup > 0 {
            warmup -= 1
            if warmup == 0 {
                start = time
                lastChange = player.lastChangeTime
                started()
            }
            return true
        }
        ticks.append(time)
        if let change = player.lastChangeTime, change != lastChange {
            lastChange = change
            shown.append(Shown(frame: player.currentFrame, time: change))
        }
        if let start, Double(time - start) / 1e6 >= seconds {
            done()
            return false
        }
        return true
    }
}
