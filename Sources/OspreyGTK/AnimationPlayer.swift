import CGtk
import Osprey

/// Plays an animated image on a widget: the frame shown advances on the widget's frame clock
/// (`gtk_widget_add_tick_callback`), by each frame's delay, for the loop count. Frames come from
/// an ``AnimationFrameBuffer`` filled ahead off the main thread; a frame that is late (its time
/// passed while the main loop was busy, or it was not made yet) is skipped by time, never played
/// slow. The clock advances only while the widget is mapped: an unmapped widget's animation
/// pauses where it is and resumes from there.
///
/// ``OspreyPicture`` makes one for each animated image it shows (``OspreyPicture/animation``).
@MainActor
public final class AnimationPlayer {
    /// The frames, made ahead.
    public let buffer: AnimationFrameBuffer
    /// How many times the animation plays (0: forever): the settings' override or the image's.
    public let loopCount: Int
    /// The frame shown (0-based).
    public private(set) var currentFrame = 0
    /// Full plays completed.
    package private(set) var completedLoops = 0
    /// Whether the loop count was reached; the last frame stays on screen.
    public private(set) var isFinished = false
    /// Whether the animation is playing (not paused and not finished).
    public var isPlaying: Bool { playing && !isFinished }
    /// Frames skipped because their time passed before a tick could show them.
    private(set) var skippedFrames = 0
    /// The frame clock's time (microseconds) of the first tick, and of the last frame change.
    package private(set) var startTime: Int64?
    /// The frame clock's time (microseconds) when ``currentFrame`` was put on screen.
    public private(set) var lastChangeTime: Int64?

    private let picture: OspreyPicture
    private let delays: [Int64]
    private var playing: Bool
    private var tickID: UInt32 = 0
    private var lastTick: Int64?
    /// Time spent on the current frame so far, in microseconds.
    private var elapsed: Int64 = 0
    /// The frame on screen (frame 0 is shown by the picture before playback starts).
    private var shownFrame = 0
    private var unmapHandler: gulong = 0
    /// Paused because the system saves power (``powerSaverChanged(_:)``): plays again when it stops.
    private var pausedForPower = false

    /// Plays `image`, decoded whole: the textures share its pixels.
    convenience init(image: Image, picture: OspreyPicture, settings: AnimationSettings) {
        let capacity = settings.bufferCapacity(frameCount: image.frameCount, width: image.width, height: image.height)
        self.init(buffer: AnimationFrameBuffer(image: image, capacity: capacity), picture: picture, settings: settings)
    }

    /// Plays the frames of `decoder`, each decoded when the buffer's window reaches it; `first`
    /// is frame 0's texture, on screen already (buffered, not decoded again).
    convenience init(decoder: AnimationFrameDecoder, first: Texture?, picture: OspreyPicture, settings: AnimationSettings) {
        let capacity = settings.bufferCapacity(frameCount: decoder.frameCount, width: decoder.width, height: decoder.height)
        self.init(buffer: AnimationFrameBuffer(decoder: decoder, capacity: capacity, first: first), picture: picture, settings: settings)
    }

    private init(buffer: AnimationFrameBuffer, picture: OspreyPicture, settings: AnimationSettings) {
        self.picture = picture
        self.buffer = buffer
        loopCount = max(0, settings.loopCount ?? buffer.loopCount)
        // Delays in microseconds; below 10 ms counts as 100 ms, as browsers play GIFs.
        let frameDelays = buffer.frameDelays
        delays = (0..<buffer.frameCount).map { index in
            let delay = index < frameDelays.count ? frameDelays[index] : 100
            return Int64(delay < 10 ? 100 : delay) * 1000
        }
        playing = settings.autoplay
        if SystemMonitors.register(self) && playing { (playing, pausedForPower) = (false, true) }
        buffer.prefetchWithinMemory(from: 0)
        watchUnmap()
        if playing { startTicking() }
    }

    /// Plays from where it stands (a finished animation starts again from frame 0).
    public func play() {
        if isFinished {
            isFinished = false
            completedLoops = 0
            currentFrame = 0
            elapsed = 0
            buffer.prefetchWithinMemory(from: 0)
            // Decoded on demand and not buffered: the tick shows it once the buffer made it.
            if let first = buffer.texture(at: 0) ?? (buffer.image != nil ? buffer.makeTexture(frame: 0) : nil) {
                picture.showFrame(first)
                shownFrame = 0
            }
        }
        playing = true
        startTicking()
    }

    /// Pauses on the current frame.
    public func pause() {
        pausedForPower = false
        playing = false
        stopTicking()
    }

    /// Pauses while the system saves power (`enabled`) and plays again after, if it was playing
    /// then and has not been stopped or paused since.
    func powerSaverChanged(_ enabled: Bool) {
        if enabled, isPlaying {
            pause()
            pausedForPower = true
        } else if !enabled, pausedForPower {
            pausedForPower = false
            if unmapHandler != 0 { play() }
        }
    }

    /// Releases every buffered frame but the one shown (a critical low-memory warning). While the
    /// pressure lasts (``SystemMonitors/memoryIsCritical``) playback goes on with one frame
    /// buffered, the next one made as its time comes; after, the buffer fills its window again.
    func keepShownFrameOnly() {
        buffer.keep(frame: shownFrame)
    }

    /// Stops for good (the picture shows something else or is gone).
    func stop() {
        pausedForPower = false
        playing = false
        stopTicking()
        if unmapHandler != 0, picture.isAlive { g_signal_handler_disconnect(picture.picture, unmapHandler) }
        unmapHandler = 0
    }

    /// Unmapping (the widget or its window hidden) pauses the clock: the next tick after mapping
    /// again starts counting afresh.
    private func watchUnmap() {
        let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: AnimationPlayer.self)?.lastTick = nil }
        }
        // A weak reference: stop() disconnects, and a handler run after the player went finds nil.
        unmapHandler = GObjectSupport.connect(picture.picture, "unmap", unsafeBitCast(handler, to: GCallback.self), weakly: self)
    }

    private func startTicking() {
        guard tickID == 0, picture.isAlive else { return }
        lastTick = nil
        tickID = gtk_widget_add_tick_callback(
            picture.picture,
            { _, clock, data in
                let player = Unmanaged<AnimationPlayer>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { player.tick(Int64(gdk_frame_clock_get_frame_time(clock))) ? 1 : 0 }
            }, Unmanaged.passRetained(self).toOpaque(), { data in Unmanaged<AnimationPlayer>.fromOpaque(data!).release() })
    }

    private func stopTicking() {
        guard tickID != 0 else { return }
        let id = tickID
        tickID = 0
        if picture.isAlive { gtk_widget_remove_tick_callback(picture.picture, id) }
    }

    /// One frame-clock tick at `time` (microseconds): advances by the time passed since the last
    /// tick and shows the frame due now. Returns whether to keep ticking.
    private func tick(_ time: Int64) -> Bool {
        guard playing, !isFinished, picture.isAlive else {
            tickID = 0
            return false
        }
        // Unmapped: no time passes.
        guard gtk_widget_get_mapped(picture.picture) != 0, let last = lastTick else {
            lastTick = gtk_widget_get_mapped(picture.picture) != 0 ? time : nil
            if startTime == nil, lastTick != nil { (startTime, lastChangeTime) = (time, time) }
            return true
        }
        lastTick = time
        elapsed += max(0, time - last)
        let previous = currentFrame
        var advanced = 0
        while elapsed >= delays[currentFrame] {
            elapsed -= delays[currentFrame]
            if currentFrame == delays.count - 1 {
                completedLoops += 1
                if loopCount > 0 && completedLoops >= loopCount {
                    isFinished = true
                    break
                }
                currentFrame = 0
            } else {
                currentFrame += 1
            }
            advanced += 1
        }
        // Frames whose time passed between two ticks are never shown.
        if advanced > 1 { skippedFrames += advanced - 1 }
        if advanced > 0 {
            if shownFrame != previous { skippedFrames += 1 }
            buffer.prefetchWithinMemory(from: currentFrame)
        }
        // A frame not made yet stays off screen (the previous one shows) until it is made or its
        // time passes.
        if shownFrame != currentFrame, let texture = buffer.texture(at: currentFrame) {
            picture.showFrame(texture)
            shownFrame = currentFrame
            lastChangeTime = time
        }
        if isFinished { tickID = 0 }
        return !isFinished
    }
}
