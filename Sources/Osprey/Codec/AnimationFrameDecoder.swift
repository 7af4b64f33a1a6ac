import COspreyVips
import Foundation
import Synchronization

/// Decodes an animation (GIF, WebP) one frame at a time from its compressed bytes, so that the
/// decoded pixels held are the frames a caller keeps, not the whole animation: SDWebImage's
/// `SDAnimatedImage` and Nuke's animated `ImageContainer.data` keep the bytes the same way.
///
/// The frames are read with one sequential libvips load (`n=-1`, `access=sequential`): asking
/// for the frames in order, as a player does, decodes each once (skipping ahead decodes the frames
/// between, which GIF and WebP need to compose the next one); asking for an earlier frame (the
/// loop starting again) opens the load anew. Thread-safe: calls are serialised, so call it off the
/// main thread (OspreyGTK's `AnimationFrameBuffer` does, on its queue).
///
/// Frames come out like ``ImageDecoder``'s: sRGB, 8 bits per band, upright when
/// ``DecodingOptions/autoOrient`` is on. The other decoding options (thumbnail, scale-down, first
/// frame only) do not apply: every frame is full size.
public final class AnimationFrameDecoder: @unchecked Sendable {
    // @unchecked: `bytes` is written once, in init, and only read afterwards (by libvips, under
    // `state`'s lock, which serialises every use of the load); the rest is immutable or in `state`.
    private struct State: Sendable {
        /// The sequential load and the next frame it can give without starting again.
        var source: VipsImageRef?
        var next = 0
        var decoded = 0
    }

    /// The format of the bytes (``ImageFormat/gif`` or ``ImageFormat/webp``).
    public let format: ImageFormat
    /// Width of one frame, in pixels (after auto-orientation).
    public let width: Int
    /// Height of one frame, in pixels (after auto-orientation).
    public let height: Int
    /// The number of frames; 1 for a still image.
    public let frameCount: Int
    /// The display time of each frame in milliseconds (`frameCount` entries, a missing or zero
    /// delay as 100 ms, as ``Image/frameDelays``); empty for a still image.
    public let frameDelays: [Int]
    /// How many times the animation plays; 0 means forever.
    public let loopCount: Int
    /// The compressed bytes, kept for the life of the decoder.
    public let data: Data

    private let bytes: UnsafeMutableRawBufferPointer
    private let storedHeight: Int
    private let rotate: Bool
    private let state = Locked(State())
    private let live = LiveFrames()

    /// Reads the header of `data` and keeps the bytes; `options` (default
    /// ``DecodingOptions/default``) give the orientation rule and the source-size limit, summed
    /// over the frames as ``ImageDecoder`` does. Throws the decoder's errors: empty, unknown or
    /// damaged data, a format that does not animate (``OspreyError/DecodingReason/noDecoder(format:)``),
    /// or a source over ``DecodingOptions/maxSourcePixels``.
    public init(data: Data, options: DecodingOptions = .default) throws(OspreyError) {
        let format = try ImageDecoder.sniffedFormat(of: data)
        guard format.supportsAnimation else { throw .decoding(.noDecoder(format: format)) }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 16)
        data.withUnsafeBytes { bytes.copyMemory(from: $0) }
        let source: VipsImageRef
        do throws(OspreyError) {
            try ImageDecoder.checkDeclaredSize(UnsafeRawBufferPointer(bytes), format: format, options: options)
            do throws(VipsFailure) {
                source = try Self.open(bytes, format: format)
            } catch {
                throw ImageDecoder.classify(error, format: format)
            }
            let pageHeight = source.int("page-height").flatMap { $0 > 0 && source.height % $0 == 0 ? $0 : nil } ?? source.height
            try options.checkSourcePixels(width: source.width, height: pageHeight, frames: max(1, source.height / pageHeight))
        } catch {
            bytes.deallocate()
            throw error
        }
        // Nothing throws from here on (deinit frees the bytes).
        let pageHeight = source.int("page-height").flatMap { $0 > 0 && source.height % $0 == 0 ? $0 : nil } ?? source.height
        let frames = max(1, source.height / pageHeight)
        let orientation = source.int("orientation").flatMap(ImageOrientation.init(rawValue:)) ?? .up
        rotate = options.autoOrient && orientation != .up
        (width, height) = rotate && orientation.swapsDimensions ? (pageHeight, source.width) : (source.width, pageHeight)
        storedHeight = pageHeight
        frameCount = frames
        frameDelays = frames > 1 ? Image.normalisedDelays(source.intArray("delay") ?? [], count: frames) : []
        loopCount = source.int("loop") ?? 0
        self.format = format
        self.data = data
        self.bytes = bytes
        state.withLock { $0.source = source }
    }

    deinit {
        // The load reads `bytes` in place: let it go first.
        state.withLock { $0.source = nil }
        bytes.deallocate()
    }

    /// Frames decoded so far (a frame decoded again when the loop starts over counts again).
    var decodedCount: Int { state.withLock { $0.decoded } }

    /// Frames this decoder made whose pixels are still in memory (an image, or a texture sharing
    /// its pixels, still holds them): what a bounded buffer bounds. Counted from the pixel images'
    /// finalisation, so it is exact.
    var framesInMemory: Int { live.count.load(ordering: .relaxed) }

    /// Decodes frame `index` (0-based) into a still image holding that frame alone. Throws
    /// ``OspreyError/DecodingReason/corruptData(format:message:)`` for an index out of range, and
    /// the decoder's damage errors (a frame cut short: ``OspreyError/DecodingReason/truncatedData(format:message:)``).
    public func frame(at index: Int) throws(OspreyError) -> Image {
        guard index >= 0, index < frameCount else {
            throw .decoding(.corruptData(format: format, message: "frame \(index) asked of an animation of \(frameCount) frames"))
        }
        let format = self.format
        return try state.withLock { (state) throws(OspreyError) -> Image in
            do throws(VipsFailure) {
                if state.source == nil || index < state.next {
                    state.source = nil
                    state.source = try Self.open(bytes, format: format)
                }
                guard let source = state.source else { throw VipsFailure(message: "no source") }
                let top = Int32(index * storedHeight)
                var frame = try source.apply { osprey_extract_area($0, 0, top, Int32(source.width), Int32(storedHeight), &$1) }
                frame = try frame.normalisedToSRGB().materialised()
                if rotate { frame = try frame.apply { osprey_autorot($0, &$1) }.materialised() }
                state.next = index + 1
                state.decoded += 1
                live.track(frame)
                return Image(storage: frame, frameHeight: frame.height, format: format, frameDelays: [], loopCount: loopCount, orientation: .up)
            } catch {
                // A failed read leaves the load unusable: the next call opens it again.
                state.source = nil
                throw ImageDecoder.classify(error, format: format)
            }
        }
    }

    private static func open(_ bytes: UnsafeMutableRawBufferPointer, format: ImageFormat) throws(VipsFailure) -> VipsImageRef {
        let options = format.loaderOptions(allFrames: true, sequential: true)
        return try VipsImageRef.make { out in osprey_load_buffer(bytes.baseAddress, bytes.count, options, &out) }
    }
}

/// The count behind `AnimationFrameDecoder.framesInMemory`: each frame's pixel image holds one
/// reference to it and gives it back when finalised.
private final class LiveFrames: Sendable {
    let count = Atomic<Int>(0)

    func track(_ frame: VipsImageRef) {
        count.add(1, ordering: .relaxed)
        let notify: GWeakNotify = { data, _ in
            Unmanaged<LiveFrames>.fromOpaque(data!).takeRetainedValue().count.subtract(1, ordering: .relaxed)
        }
        g_object_weak_ref(
            UnsafeMutableRawPointer(frame.pointer).assumingMemoryBound(to: GObject.self), notify, Unmanaged.passRetained(self).toOpaque())
    }
}
