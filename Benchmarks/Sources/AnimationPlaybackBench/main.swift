import CGtk
import Foundation
import Osprey
import OspreyGTK

// Plays an animated image (GIF, WebP) on an OspreyPicture in a GTK window for SECONDS of
// frame-clock time and prints one JSON line: how long each frame stayed on screen against its
// delay (from the frame clock), frames skipped, CPU per second of playback (the process's
// utime+stime), peak RSS, and the frame buffer's counts. BUFFER is the buffer's frame count
// (AnimationSettings.maxBufferedFrames; the byte budget is lifted) or `all` (every frame). SOURCE
// `whole` decodes the image whole first (as the pipeline does; textures share its pixels),
// `ondemand` plays it through an AnimationFrameDecoder (each frame decoded when the buffer
// reaches it).
//   AnimationPlaybackBench FILE [SECONDS=10] [BUFFER=8|all] [SOURCE=whole|ondemand]
// Run under an X display with GDK_BACKEND=x11 GSK_RENDERER=cairo: `bash Benchmarks/playback.sh`.
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: AnimationPlaybackBench FILE [SECONDS=10] [BUFFER=8|all] [SOURCE=whole|ondemand]\n".utf8))
    exit(2)
}
let path = arguments[1]
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10
let bufferArgument = arguments.count > 3 ? arguments[3] : "8"
let onDemand = arguments.count > 4 && arguments[4] == "ondemand"

OspreyApplication.initialize()
let data = try Data(contentsOf: URL(fileURLWithPath: path))
let first: Texture?
let frameDelays: [Int]
if onDemand {
    let decoder = try AnimationFrameDecoder(data: data)
    (first, frameDelays) = (Texture(decoding: decoder), decoder.frameDelays)
} else {
    let image = try Image(data: data)
    (first, frameDelays) = (Texture(image: image), image.frameDelays)
}
guard let first, frameDelays.count > 1 else {
    FileHandle.standardError.write(Data("\(path): not an animated image\n".utf8))
    exit(1)
}
let frames = frameDelays.count
let buffered = bufferArgument == "all" ? frames : max(1, Int(bufferArgument) ?? 8)
// The player's rule: a delay under 10 ms plays as 100 ms.
let delays = frameDelays.map { Int64($0 < 10 ? 100 : $0) * 1000 }

let picture = OspreyPicture()
picture.animationSettings = AnimationSettings(loopCount: 0, maxBufferedFrames: buffered, maxBufferBytes: .max)
let window = gtk_window_new()!
gtk_window_set_decorated(GtkWindowPointer(window), 0)
gtk_window_set_default_size(GtkWindowPointer(window), Int32(first.width), Int32(first.height))
gtk_window_set_child(GtkWindowPointer(window), picture.widget)
gtk_window_present(GtkWindowPointer(window))
picture.display(first)
guard let player = picture.animation else {
    FileHandle.standardError.write(Data("no player for \(path)\n".utf8))
    exit(1)
}

/// The process's CPU time (user + system) in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func percentile(_ values: [Double], _ q: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
}

var cpuAtStart = 0.0
var wallAtStart = Date()
var recorder: PlaybackRecorder?
recorder = PlaybackRecorder(
    player: player, seconds: seconds,
    started: {
        cpuAtStart = cpuSeconds()
        wallAtStart = Date()
    },
    done: {
        let cpu = cpuSeconds() - cpuAtStart
        let wall = Date().timeIntervalSince(wallAtStart)
        guard let recorder else { return }
        let tickMs = percentile(zip(recorder.ticks.dropFirst(), recorder.ticks).map { Double($0 - $1) / 1000 }, 0.5)
        // A frame followed by the next one: how long it stayed on screen against its delay.
        var errors: [Double] = []
        for (shown, next) in zip(recorder.shown, recorder.shown.dropFirst()) where next.frame == (shown.frame + 1) % frames {
            errors.append(Double(next.time - shown.time - delays[shown.frame]) / 1000)
        }
        let absolute = errors.map(abs)
        let within = absolute.filter { $0 <= tickMs + 0.5 }.count
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ")
        let rssEnd = statm.flatMap { $0.count > 1 ? Double($0[1]) : nil }.map { $0 * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576 } ?? 0
        let fields: [(String, String)] = [
            ("file", "\"\((path as NSString).lastPathComponent)\""), ("source", onDemand ? "\"ondemand\"" : "\"whole\""),
            ("frames", "\(frames)"), ("buffer", "\(player.buffer.capacity)"),
            ("seconds", String(format: "%.2f", wall)), ("tick_ms", String(format: "%.2f", tickMs)),
            ("frames_shown", "\(recorder.shown.count)"), ("frames_timed", "\(errors.count)"),
            ("err_median_ms", String(format: "%.2f", percentile(errors, 0.5))),
            ("abs_err_p95_ms", String(format: "%.2f", percentile(absolute, 0.95))),
            ("abs_err_max_ms", String(format: "%.2f", absolute.max() ?? 0)),
            ("within_tick", String(format: "%.4f", errors.isEmpty ? 0 : Double(within) / Double(errors.count))),
            ("cpu_per_s", String(format: "%.4f", cpu / max(wall, 0.001))),
            ("peak_rss_mb", String(format: "%.1f", Double(usage.ru_maxrss) / 1024)), ("rss_end_mb", String(format: "%.1f", rssEnd)),
            ("buffer_peak", "\(player.buffer.peakCount)"), ("textures_made", "\(player.buffer.madeCount)")
        ]
        print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        fflush(nil)
        OspreyApplication.quit()
    })
recorder?.start(on: picture.picture)
OspreyApplication.run()
