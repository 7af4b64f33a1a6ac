import COspreyVips
import Foundation

/// A decoded image: its pixels live in memory, in sRGB with 8 bits per band, 3 bands or 4 with alpha.
///
/// An animation keeps all its frames (stacked as one tall libvips image, each `height` rows high),
/// its per-frame delays and its loop count. `Image` is an immutable value and `Sendable`: copies
/// share the pixel buffer, and nothing mutates it.
///
/// Make one by decoding (``init(data:options:)``, ``init(contentsOf:options:)``, ``ImageDecoder``)
/// or from raw pixels (``init(rgba:width:height:)``); turn it back into bytes with ``encoded(as:quality:)``.
public struct Image: Sendable {
    /// Everything an image is, in one immutable object: copying an `Image` (into a cache, out of
    /// it, into a result) retains one reference.
    private final class Box: Sendable {
        let storage: VipsImageRef
        let width: Int
        let height: Int
        let format: ImageFormat?
        let frameCount: Int
        let frameDelays: [Int]
        let loopCount: Int
        let orientation: ImageOrientation

        init(
            storage: VipsImageRef, width: Int, height: Int, format: ImageFormat?, frameCount: Int,
            frameDelays: [Int], loopCount: Int, orientation: ImageOrientation
        ) {
            self.storage = storage
            self.width = width
            self.height = height
            self.format = format
            self.frameCount = frameCount
            self.frameDelays = frameDelays
            self.loopCount = loopCount
            self.orientation = orientation
        }
    }

    private let box: Box

    /// The pixels: all frames stacked vertically, materialised in memory.
    var storage: VipsImageRef { box.storage }

    /// Width of one frame, in pixels.
    public var width: Int { box.width }
    /// Height of one frame, in pixels.
    public var height: Int { box.height }
    /// The format the image was decoded from; `nil` for images made from pixels. Processors keep it
    /// while it can hold their output: a JPEG that gains alpha (round corners) becomes `.png`.
    public var format: ImageFormat? { box.format }
    /// The number of frames; 1 for a still image.
    public var frameCount: Int { box.frameCount }
    /// The display time of each frame in milliseconds (`frameCount` entries), empty for a still image.
    public var frameDelays: [Int] { box.frameDelays }
    /// How many times an animation plays; 0 means forever (the GIF and WebP default).
    public var loopCount: Int { box.loopCount }
    /// The EXIF orientation the source declared (``ImageOrientation/up`` when it declared none).
    public var orientation: ImageOrientation { box.orientation }

    init(
        storage: VipsImageRef, frameHeight: Int, format: ImageFormat?, frameDelays: [Int],
        loopCount: Int, orientation: ImageOrientation
    ) {
        let frameCount = max(1, storage.height / max(1, frameHeight))
        box = Box(
            storage: storage, width: storage.width, height: frameHeight, format: format, frameCount: frameCount,
            frameDelays: frameCount > 1 ? Image.normalisedDelays(frameDelays, count: frameCount) : [],
            loopCount: loopCount, orientation: orientation)
    }

    /// Whether the image has an alpha channel.
    public var hasAlpha: Bool { storage.bands == 2 || storage.bands == 4 }
    /// Whether the image has more than one frame.
    public var isAnimated: Bool { frameCount > 1 }
    /// Bytes the decoded pixels take in memory (all frames); what a memory cache charges for it.
    public var cost: Int { storage.memoryCost }

    /// Makes an image from tightly packed RGBA8 pixels (`width * height * 4` bytes, row by row).
    /// Throws ``OspreyError/DecodingReason/corruptData(format:message:)`` (format `.png`, nominal)
    /// when the byte count does not match.
    public init(rgba pixels: [UInt8], width: Int, height: Int) throws(OspreyError) {
        guard width > 0, height > 0, pixels.count == width * height * 4 else {
            throw .decoding(
                .corruptData(format: .png, message: "expected \(max(0, width * height * 4)) RGBA bytes for \(width)x\(height), got \(pixels.count)"))
        }
        do throws(VipsFailure) {
            let ref = try VipsImageRef.make { out in
                pixels.withUnsafeBytes { raw in
                    out = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), 4, VIPS_FORMAT_UCHAR)
                    return out == nil ? -1 : 0
                }
            }
            // The bytes are sRGB by definition: tagged so (a conversion from libvips' untagged
            // "multiband" leaves the tag, and processors that composite or flatten then fail).
            let srgb = try ref.apply { osprey_retag($0, Int32(VIPS_INTERPRETATION_sRGB.rawValue), &$1) }
            self.init(storage: try srgb.materialised(), frameHeight: height, format: nil, frameDelays: [], loopCount: 0, orientation: .up)
        } catch {
            throw .decoding(.corruptData(format: .png, message: error.message))
        }
    }

    /// The pixels as RGBA8, row by row, frame after frame: `width * height * frameCount * 4` bytes.
    /// Images without alpha get an opaque alpha byte (255).
    public func rgbaPixels() throws(OspreyError) -> [UInt8] {
        do throws(VipsFailure) {
            let rgba = hasAlpha ? storage : try storage.apply { osprey_bandjoin_const1($0, 255, &$1) }
            var size = 0
            guard let buffer = vips_image_write_to_memory(rgba.pointer, &size) else {
                throw VipsFailure(message: Vips.takeError())
            }
            defer { g_free(buffer) }
            return Array(UnsafeRawBufferPointer(start: buffer, count: size))
        } catch {
            throw .encoding(.failed(format: .png, message: "reading RGBA pixels: \(error.message)"))
        }
    }

    /// The frame at `index` (0-based) as a still image, or `nil` when out of range.
    public func frame(at index: Int) -> Image? {
        guard index >= 0, index < frameCount else { return nil }
        if frameCount == 1 { return self }
        guard let ref = try? storage.apply({ osprey_extract_area($0, 0, Int32(index * height), Int32(width), Int32(height), &$1) }).materialised()
        else {
            return nil
        }
        return replacing(storage: ref, frameHeight: height, keepAnimation: false)
    }

    /// The same metadata around new pixels (used by processors). The format stays unless it cannot
    /// hold the new pixels: a JPEG that gained transparency (round corners) becomes a PNG, so that
    /// every later encode and cache write keeps the alpha.
    func replacing(storage: VipsImageRef, frameHeight: Int, keepAnimation: Bool = true) -> Image {
        let gainedAlpha = (storage.bands == 2 || storage.bands == 4) && format?.holdsAlpha == false
        return Image(
            storage: storage, frameHeight: frameHeight, format: gainedAlpha ? .png : format,
            frameDelays: keepAnimation ? frameDelays : [], loopCount: loopCount, orientation: orientation)
    }

    /// Per-frame delays: a missing or short list is padded with 100 ms, as browsers do for GIFs.
    static func normalisedDelays(_ delays: [Int], count: Int) -> [Int] {
        (0..<count).map { $0 < delays.count && delays[$0] > 0 ? delays[$0] : 100 }
    }
}
