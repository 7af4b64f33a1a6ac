/// How an ``OspreyPicture`` plays an animated image (GIF, WebP): set
/// ``OspreyPicture/animationSettings`` before loading. A still image, or one loaded with
/// ``Osprey/RequestOption/onlyLoadFirstFrame`` (for lists that should not animate), never plays.
public struct AnimationSettings: Sendable, Hashable {
    /// Start playing when the image is shown. Default `true`; ``AnimationPlayer/play()`` and
    /// ``AnimationPlayer/pause()`` change it while it plays.
    public var autoplay: Bool
    /// How many times to play, overriding the image's own loop count; 0 plays forever. Default
    /// `nil`: the image's ``Osprey/Image/loopCount``.
    public var loopCount: Int?
    /// The most frames held as textures at once, the current one and those made ahead of it.
    /// Default 8 (SDWebImage keeps a similar handful; Kingfisher's `framePreloadCount` is 10).
    public var maxBufferedFrames: Int
    /// The most bytes (4 per pixel) the buffered frames may take, like SDWebImage's
    /// `maxBufferSize`; at least one frame is always held. Default 16 MiB.
    public var maxBufferBytes: Int

    /// Settings; every argument has the default documented on its property.
    public init(autoplay: Bool = true, loopCount: Int? = nil, maxBufferedFrames: Int = 8, maxBufferBytes: Int = 16 << 20) {
        self.autoplay = autoplay
        self.loopCount = loopCount
        self.maxBufferedFrames = maxBufferedFrames
        self.maxBufferBytes = maxBufferBytes
    }

    /// The number of frames held for a `frameCount`-frame animation of `width`×`height` frames:
    /// the smaller of the two limits, at least 1, at most the frame count.
    public func bufferCapacity(frameCount: Int, width: Int, height: Int) -> Int {
        let frameBytes = max(1, width * height * 4)
        return max(1, min(frameCount, maxBufferedFrames, maxBufferBytes / frameBytes))
    }
}
