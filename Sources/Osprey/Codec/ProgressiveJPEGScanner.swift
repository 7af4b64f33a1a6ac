import Foundation

/// Finds the scan boundaries of a progressive JPEG while its bytes arrive, so that a preview can
/// be decoded from a prefix that ends where a scan ended (Nuke's progressive scanner, with the
/// segments walked instead of searched).
///
/// Feed it the whole body received so far, each time a chunk arrives; it resumes where it
/// stopped, so every byte is looked at once. It walks the marker segments by their lengths (so a
/// `FF DA` inside a table or an EXIF block is not taken for a scan), and inside a scan's
/// entropy-coded data it looks for the first `FF` that is not stuffing (`FF 00`), a restart
/// marker (`FF D0`-`FF D7`) or fill (`FF FF`): there the scan has ended. ``boundary`` is then the
/// length of a prefix that, closed with an EOI marker (`FF D9`), libjpeg decodes as the image with
/// the scans so far.
///
/// It gives up at once, and stays given up (``verdict`` ``Verdict/notProgressive``), on bytes
/// that do not start with a JPEG's SOI marker, on any frame other than SOF2 (baseline SOF0,
/// extended SOF1, lossless, arithmetic), on a scan before the frame, and on a malformed
/// segment length: a caller then does no more work for that body.
struct ProgressiveJPEGScanner: Sendable {
    /// What the scanner knows about the body.
    enum Verdict: Sendable, Equatable {
        /// No frame header yet.
        case undecided
        /// A progressive JPEG (SOF2): previews are possible.
        case progressive
        /// Not a progressive JPEG, or malformed: nothing more to do.
        case notProgressive
    }

    private(set) var verdict = Verdict.undecided
    /// Scans complete so far (each followed by a marker).
    private(set) var completedScans = 0
    /// The length of the prefix that ends with the last complete scan (0: none yet).
    private(set) var boundary = 0
    /// Where the walk resumes.
    private var offset = 0
    /// Whether ``offset`` is inside a scan's entropy-coded data.
    private var inScan = false
    /// The EOI marker was reached: the body is complete.
    private(set) var reachedEnd = false
    /// The length of the body last seen.
    private var seen = 0

    /// Looks at the bytes of `body` it has not seen. `body` is the whole body so far: each call's
    /// body starts with the previous call's. A shorter body (a download started again) starts the
    /// walk over. Returns `true` when a scan completed during this call.
    @discardableResult
    mutating func scan(_ body: UnsafeRawBufferPointer) -> Bool {
        if body.count < seen { self = ProgressiveJPEGScanner() }
        seen = body.count
        guard verdict != .notProgressive, !reachedEnd, let base = body.baseAddress else { return false }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let count = body.count
        let scansBefore = completedScans
        if offset == 0 {
            guard count >= 2 else { return false }
            guard bytes[0] == 0xFF, bytes[1] == 0xD8 else {
                verdict = .notProgressive
                return false
            }
            offset = 2
        }
        while offset < count {
            if inScan {
                guard let end = Self.endOfEntropyData(bytes, from: offset, count: count) else { break }
                // `end` is the marker that ends the scan; the walk goes on from it.
                completedScans += 1
                boundary = end
                offset = end
                inScan = false
                continue
            }
            guard walkSegment(bytes, count: count) else { break }
        }
        return completedScans > scansBefore
    }

    /// Steps over the marker segment at ``offset``. `false` when more bytes are needed or the
    /// scanner gave up.
    private mutating func walkSegment(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        guard offset + 1 < count else { return false }
        guard bytes[offset] == 0xFF else {
            verdict = .notProgressive
            return false
        }
        let marker = bytes[offset + 1]
        switch marker {
        case 0xFF:
            // Fill bytes before a marker.
            offset += 1
            return true
        case 0xD9:
            reachedEnd = true
            return false
        case 0x01, 0xD0...0xD8:
            // Markers without a length (TEM, RSTn, SOI).
            offset += 2
            return true
        default:
            break
        }
        guard offset + 3 < count else { return false }
        let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        guard length >= 2 else {
            verdict = .notProgressive
            return false
        }
        switch marker {
        case 0xC2:
            if verdict == .undecided { verdict = .progressive }
        case 0xC0, 0xC1, 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
            // Any other frame: baseline, extended, lossless, hierarchical or arithmetic.
            verdict = .notProgressive
            return false
        case 0xDA:
            guard verdict == .progressive else {
                verdict = .notProgressive
                return false
            }
            inScan = true
        default:
            break
        }
        offset += 2 + length
        return true
    }

    /// The first marker at or after `from` that ends entropy-coded data, or `nil` when the bytes
    /// run out first (a trailing `FF` waits for the byte after it).
    private static func endOfEntropyData(_ bytes: UnsafePointer<UInt8>, from: Int, count: Int) -> Int? {
        var index = from
        while index < count {
            guard let found = memchr(bytes + index, 0xFF, count - index) else { return nil }
            let position = UnsafeRawPointer(bytes).distance(to: UnsafeRawPointer(found))
            guard position + 1 < count else { return nil }
            switch bytes[position + 1] {
            case 0x00, 0xD0...0xD7, 0xFF:
                // Stuffing, a restart marker, or fill before a marker: still inside the scan.
                index = position + 1
            default:
                return position
            }
        }
        return nil
    }
}
