import Dispatch
import Osprey

/// The frames of one animation made into textures ahead of playback, on a background queue, at
/// most ``capacity`` at once: the window of frames from the one shown onwards (wrapping at the
/// end). Frames that fall out of the window are released; a frame made after the window moved
/// past it is dropped.
public final class AnimationFrameBuffer: Sendable {
    private struct State {
        var frames: [Int: Texture] = [:]
        var window: Set<Int> = []
        var wanted: [Int] = []
        var working = false
        var peak = 0
        var made = 0
    }

    /// The animation.
    public let image: Image
    /// The most frames held at once.
    public let capacity: Int
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "osprey.animation-frames", qos: .utility)

    /// A buffer for `image` holding at most `capacity` frames (at least 1).
    public init(image: Image, capacity: Int) {
        self.image = image
        self.capacity = max(1, min(capacity, image.frameCount))
    }

    /// The texture of frame `index` when it is buffered.
    public func texture(at index: Int) -> Texture? {
        state.withLock { $0.frames[index] }
    }

    /// Frames held now.
    public var count: Int { state.withLock { $0.frames.count } }
    /// The most frames held at any time so far (never more than ``capacity``).
    public var peakCount: Int { state.withLock { $0.peak } }
    /// Textures made so far (a frame made again after it left the window counts again).
    public var madeCount: Int { state.withLock { $0.made } }

    /// Moves the window to start at frame `index`: releases the frames outside it and makes the
    /// missing ones in the background, nearest first.
    public func prefetch(from index: Int) {
        let frameCount = image.frameCount
        let window = (0..<capacity).map { (index + $0) % frameCount }
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
            let texture = Texture(image: image, frame: next)
            state.withLock { state in
                guard let texture, state.window.contains(next) else { return }
                state.frames[next] = texture
                state.made += 1
                state.peak = max(state.peak, state.frames.count)
            }
        }
    }
}
