import Dispatch
import Osprey

/// The frames of one animation made into textures ahead of playback, on a background queue, at
/// most ``capacity`` at once: the window of frames from the one shown onwards (wrapping at the
/// end). Frames that fall out of the window are released; a frame made after the window moved
/// past it is dropped.
///
/// The frames come from an ``Osprey/Image`` decoded whole (``init(image:capacity:)``: the
/// textures share its pixels, so the bound is on textures only) or from an
/// ``Osprey/AnimationFrameDecoder`` (``init(decoder:capacity:)``): then each frame is decoded when
/// the window reaches it and each texture is the only owner of its frame's pixels, so the decoded
/// pixels held are bounded by the buffer too (SDWebImage's `maxBufferSize`).
public final class AnimationFrameBuffer: Sendable {
    private struct State {
        var frames: [Int: Texture] = [:]
        var window: Set<Int> = []
        var wanted: [Int] = []
        var working = false
        var peak = 0
        var made = 0
    }

    /// The animation decoded whole, `nil` when its frames are decoded on demand.
    package let image: Image?
    /// The decoder of the frames when they are decoded on demand, `nil` for a decoded image.
    package let decoder: AnimationFrameDecoder?
    /// The number of frames.
    package let frameCount: Int
    /// Each frame's display time in milliseconds (``Osprey/Image/frameDelays``).
    package let frameDelays: [Int]
    /// The animation's own loop count (0: forever).
    package let loopCount: Int
    /// Width of a frame, in pixels.
    package let width: Int
    /// Height of a frame, in pixels.
    package let height: Int
    /// The most frames held at once.
    public let capacity: Int
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "osprey.animation-frames", qos: .utility)

    /// A buffer for `image` (decoded whole) holding at most `capacity` frames (at least 1).
    package init(image: Image, capacity: Int) {
        self.image = image
        decoder = nil
        (frameCount, frameDelays, loopCount) = (image.frameCount, image.frameDelays, image.loopCount)
        (width, height) = (image.width, image.height)
        self.capacity = max(1, min(capacity, image.frameCount))
    }

    /// A buffer that decodes the frames of `decoder` as its window reaches them, holding at most
    /// `capacity` frames (at least 1). `first` (default `nil`), the texture of frame 0 made
    /// already (the one on screen), is buffered as it is instead of being decoded again.
    package init(decoder: AnimationFrameDecoder, capacity: Int, first: Texture? = nil) {
        image = nil
        self.decoder = decoder
        (frameCount, frameDelays, loopCount) = (decoder.frameCount, decoder.frameDelays, decoder.loopCount)
        (width, height) = (decoder.width, decoder.height)
        self.capacity = max(1, min(capacity, decoder.frameCount))
        if let first {
            state.withLock { state in
                state.frames[0] = first
                state.window = [0]
                state.peak = 1
            }
        }
    }

    /// Makes the texture of frame `index` now, on the calling thread (off the main thread: it may
    /// decode); `nil` when the frame cannot be made.
    package func makeTexture(frame index: Int) -> Texture? {
        if let decoder { return (try? decoder.frame(at: index)).flatMap { Texture(image: $0) } }
        return image.flatMap { Texture(image: $0, frame: index) }
    }

    /// The texture of frame `index` when it is buffered.
    package func texture(at index: Int) -> Texture? {
        state.withLock { $0.frames[index] }
    }

    /// Frames held now.
    package var count: Int { state.withLock { $0.frames.count } }
    /// The most frames held at any time so far (never more than ``capacity``).
    public var peakCount: Int { state.withLock { $0.peak } }
    /// Textures made so far (a frame made again after it left the window counts again).
    public var madeCount: Int { state.withLock { $0.made } }

    /// Moves the window to start at frame `index`: releases the frames outside it and makes the
    /// missing ones in the background, nearest first. `limit` (default `nil`: ``capacity``)
    /// narrows the window to that many frames (at least 1), as memory that is critically short
    /// asks.
    package func prefetch(from index: Int, limit: Int? = nil) {
        let frameCount = self.frameCount
        let size = max(1, min(capacity, limit ?? capacity))
        let window = (0..<size).map { (index + $0) % frameCount }
        let start = state.withLock { state -> Bool in
            state.window = Set(window)
            state.frames = state.frames.filter { state.window.contains($0.key) }
            state.wanted = window.filter { state.frames[$0] == nil }
            guard !state.working, !state.wanted.isEmpty else { return false }
            state.working = true
            return true
        }
        if start { queue.async { self.work() } }
    }

    /// Releases every frame but `index` (kept when it is made) and stops making others until the
    /// next ``prefetch(from:)``.
    package func keep(frame index: Int) {
        state.withLock { state in
            state.window = [index]
            state.frames = state.frames.filter { $0.key == index }
            state.wanted = []
        }
    }

    private func work() {
        while true {
            let next = state.withLock { state -> Int? in
                guard !state.wanted.isEmpty else {
                    state.working = false
                    return nil
                }
                return state.wanted.removeFirst()
            }
            guard let next else { return }
            let texture = makeTexture(frame: next)
            state.withLock { state in
                guard let texture, state.window.contains(next) else { return }
                state.frames[next] = texture
                state.made += 1
                state.peak = max(state.peak, state.frames.count)
            }
        }
    }
}
