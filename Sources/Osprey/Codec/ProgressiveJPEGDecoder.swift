import COspreyVips
import Foundation
import Synchronization

/// Decodes the previews of one progressive JPEG download (``ProgressiveJPEG``), each from a longer
/// prefix of the same body, at the size the final decode will have.
///
/// With Osprey's ``ImageDecoder`` the decoding is incremental (libjpeg's buffered-image mode, see
/// `osprey_jpeg_progressive.h`): each scan is entropy-decoded once, as its bytes are handed over,
/// and a preview is one output pass over the coefficients so far, at the DCT scaling the final
/// decode's shrink-on-load will use, then turned upright, fitted to the final decode's box and
/// converted to sRGB as ``ImageDecoder`` does it. Decoding each prefix on its own instead decodes
/// every earlier scan again, so two previews would cost more than the final decode; kept
/// incremental, they cost about half of it. Other decoders, and CMYK
/// JPEGs (whose colour libvips converts), get that decode of the prefix closed with an EOI marker.
///
/// The incremental decoder holds the image's coefficients (2 bytes per pixel and channel before
/// chroma subsampling: 36 MB for a 12 MP photo) until this object goes, when the download ends
/// or no preview can come any more. All the decoders of the process together hold at most
/// ``coefficientBudget`` bytes (counted as 2 bytes per pixel and band, before subsampling): a
/// download that would go over it decodes its previews' prefixes whole, as other decoders do.
final class ProgressiveJPEGDecoder: Sendable {
    /// The coefficient bytes all incremental decoders may hold at once: 512 MB (seven 12 MP
    /// photos by the upper bound of 72 MB each).
    static let coefficientBudget = 512 << 20
    /// The coefficient bytes the live incremental decoders hold, by the upper bound.
    private static let reserved = Atomic<Int>(0)

    private let decoder: any ImageDecoding
    private let options: DecodingOptions
    private let plan: DecodePlan?
    private let budget: Int
    private let session = Mutex(Session())

    /// The libjpeg decoder and what the first preview learnt from the header.
    private final class Session {
        enum Mode {
            /// No preview yet.
            case undecided
            /// Scans go to the libjpeg decoder as they arrive.
            case incremental(OpaquePointer, Incremental)
            /// Each preview decodes its prefix closed with EOI.
            case whole
        }

        /// The header's facts every incremental preview needs.
        struct Incremental {
            var header: ImageHeader
            /// The final decode's box (its thumbnail, scale-down limit or folded plan); `nil`: full size.
            var box: ShrinkBox?
            /// Whether `box` comes from the plan (the caller then skips the plan's step).
            var folded: Bool
        }

        var mode = Mode.undecided
        /// The body's bytes already handed to the libjpeg decoder.
        var fed = 0
        /// The bytes this session counts in ``ProgressiveJPEGDecoder/reserved``.
        var reservedBytes = 0

        deinit {
            if case .incremental(let handle, _) = mode { osprey_jpeg_progressive_free(handle) }
            if reservedBytes > 0 { ProgressiveJPEGDecoder.reserved.subtract(reservedBytes, ordering: .relaxed) }
        }
    }

    /// A decoder for the previews of one download decoded by `decoder` with `options`, `plan`
    /// folded in as the final decode will fold it, decoding incrementally while the process's
    /// incremental decoders hold no more than `budget` coefficient bytes (default
    /// ``coefficientBudget``).
    init(decoder: any ImageDecoding, options: DecodingOptions, plan: DecodePlan?, budget: Int = coefficientBudget) {
        self.decoder = decoder
        self.options = options
        self.plan = plan
        self.budget = budget
    }

    /// Counts `bytes` in ``reserved`` when they fit `budget`.
    private static func reserve(_ bytes: Int, budget: Int) -> Bool {
        var current = reserved.load(ordering: .relaxed)
        while current + bytes <= budget {
            let (exchanged, original) = reserved.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// The preview of the scans in `body`'s first `scansEnd` bytes, and whether `plan` was folded
    /// into it. `body` is the body so far (each call's starts with the last call's) and holds at
    /// least the two bytes of the marker after the last scan. `nil` when no scan is new.
    func preview(of body: Data, scansEnd: Int) throws(OspreyError) -> (image: Image, folded: Bool)? {
        try session.withLock { (session: inout sending Session) throws(OspreyError) -> sending (image: Image, folded: Bool)? in
            if case .undecided = session.mode { session.mode = try start(body, session: session) }
            switch session.mode {
            case .undecided, .whole:
                var closed = Data(capacity: scansEnd + 2)
                closed.append(body.prefix(scansEnd))
                closed.append(contentsOf: [0xFF, 0xD9])
                return try decoder.decode(closed, options: options, plan: plan)
            case .incremental(let handle, let facts):
                let end = min(body.count, scansEnd + 2)
                if end > session.fed {
                    let status = body.withUnsafeBytes { bytes in
                        osprey_jpeg_progressive_append(handle, bytes.baseAddress! + session.fed, end - session.fed)
                    }
                    session.fed = end
                    // Classified as the full decode's failures are: truncation or other damage.
                    guard status == 0 else { throw ImageDecoder.classify(VipsFailure(message: Vips.takeError()), format: .jpeg) }
                }
                guard let image = try render(handle, facts) else { return nil }
                return (image, facts.folded)
            }
        }
    }

    /// Chooses how previews are decoded, from the header in the first prefix.
    private func start(_ body: Data, session: Session) throws(OspreyError) -> Session.Mode {
        guard decoder is ImageDecoder else { return .whole }
        let options = self.options
        let plan = self.plan
        let budget = self.budget
        return try ImageDecoder.withBytes(body) { (buffer) throws(OspreyError) -> Session.Mode in
            let probe = try ImageDecoder.loadHeader(buffer, format: .jpeg, allFrames: false)
            let header = probe.header
            try options.checkSourcePixels(width: header.width, height: header.height, frames: 1)
            guard !probe.isCMYK else { return .whole }
            let coefficientBytes = header.width * header.height * probe.image.bands * 2
            guard Self.reserve(coefficientBytes, budget: budget) else { return .whole }
            session.reservedBytes = coefficientBytes
            let (box, folded) = ImageDecoder.decodeBox(header: header, frames: 1, options: options, plan: plan)
            let factor = box.map { ImageDecoder.jpegShrinkFactor(header: header, box: $0, autoOrient: options.autoOrient) } ?? 1
            guard let handle = osprey_jpeg_progressive_new(Int32(factor)) else { return .whole }
            osprey_jpeg_progressive_keep_metadata(handle, probe.image.pointer)
            return .incremental(handle, .init(header: header, box: box, folded: folded))
        }
    }

    /// The scans decoded so far, upright, in the final decode's box, in sRGB: the steps of
    /// ``ImageDecoder``'s JPEG thumbnail and full decode after their load.
    private func render(_ handle: OpaquePointer, _ facts: Session.Incremental) throws(OspreyError) -> Image? {
        do throws(VipsFailure) {
            var out: UnsafeMutablePointer<VipsImage>?
            guard osprey_jpeg_progressive_render(handle, &out) == 0 else { throw VipsFailure(message: Vips.takeError()) }
            guard let out else { return nil }
            var image = VipsImageRef(taking: out)
            if options.autoOrient && facts.header.orientation != .up {
                image = try image.apply { osprey_autorot($0, &$1) }
            }
            if let box = facts.box {
                image = try image.apply {
                    osprey_thumbnail_image($0, Int32(box.width), Int32(box.height), Int32(box.size.rawValue), Int32(box.crop.rawValue), &$1)
                }
            }
            let converted = try image.normalisedToSRGB()
            // An sRGB preview at the scaled size is the rendered image itself: no copy.
            let pixels = converted.isMaterialised ? converted : try converted.materialised()
            return Image(
                storage: pixels, frameHeight: pixels.height, format: .jpeg, frameDelays: [], loopCount: 0,
                orientation: facts.header.orientation)
        } catch {
            throw ImageDecoder.classify(error, format: .jpeg)
        }
    }
}
