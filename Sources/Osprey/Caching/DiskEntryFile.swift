import Crypto
import Foundation

/// The on-disk format of one disk cache entry (format 2): the stored bytes, then a trailer.
///
/// ```
/// data          dataSize bytes, exactly as stored (so the file starts with the entry's bytes)
/// key           keyLength bytes, UTF-8
/// meta          metaLength bytes: the HTTP validators of the download the entry came from
///               (`CacheValidator.diskMeta`), empty when it had none
/// dataSize      UInt64 LE
/// created       Float64 LE bits, seconds since 1970
/// policyValue   Float64 LE bits  ┐ the entry's own expiration, for extension on read:
/// policyKind    UInt8            ┘ 0 never, 1 seconds, 2 days, 3 date
/// (3 zero bytes)
/// keyLength     UInt32 LE
/// metaLength    UInt32 LE
/// checksum      the first 8 bytes of SHA-256 over key … metaLength
/// magic         "OSPREY\u{2}\n"
/// ```
/// A file is an entry only when its size is exactly `dataSize + keyLength + metaLength + 52`, the
/// magic and checksum match and the key is the one asked for: a torn, truncated or foreign file
/// fails one of these and is a miss. The data is not checksummed (that would cost as much as
/// reading it); in-place damage is caught by the seal below instead.
///
/// ## File times
/// Linux cannot set a creation date, but it can set both other times, and renaming keeps them:
/// - **mtime** is the entry's expiry, in whole seconds (0 = never), with a nanosecond part of
///   exactly 0: the *seal*. Any write to the file after it was sealed sets its mtime to the
///   current time, nanoseconds included, so a modified file fails the seal and is never served.
/// - **atime** is the entry's last access (written lazily, see ``DiskStorage/Config/accessRecordInterval``).
///
/// So expiry and LRU order survive restarts and are shared between instances without any
/// rewrite of the file: an extension or an access record is one `utimensat`.
struct DiskEntryFile: Sendable, Equatable {
    var key: String
    var dataSize: Int
    var created: TimeInterval
    var policy: StorageExpiration
    var meta: Data = Data()

    static let magic: [UInt8] = Array("OSPREY\u{2}\n".utf8)
    /// The bytes of the trailer after `key` and `meta`.
    static let fixedSize = 52

    var trailerSize: Int { key.utf8.count + meta.count + Self.fixedSize }

    /// The trailer to append after the data.
    func trailer() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(trailerSize)
        bytes.append(contentsOf: key.utf8)
        bytes.append(contentsOf: meta)
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        let (kind, value) = Self.encode(policy)
        put(UInt64(dataSize))
        put(created.bitPattern)
        put(value.bitPattern)
        put(kind)
        bytes.append(contentsOf: [0, 0, 0])
        put(UInt32(key.utf8.count))
        put(UInt32(meta.count))
        bytes.append(contentsOf: Self.checksum(bytes[...]))
        bytes.append(contentsOf: Self.magic)
        return bytes
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.withUnsafeBytes { checksum($0) }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        sha256(bytes).withUnsafeBytes { Array($0.prefix(8)) }
    }

    /// SHA-256 of plain bytes, through the hasher's non-generic `update(bufferPointer:)`: the
    /// generic `hash(data:)` pays for dynamic casts on every call.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> SHA256.Digest {
        var hasher = SHA256()
        hasher.update(bufferPointer: bytes)
        return hasher.finalize()
    }

    /// Parses the trailer at the end of `tail`, the last bytes of a file of `fileSize` bytes (the
    /// whole file or only its end). `nil` when the file is not an entry in this format; `needed`
    /// is set when `tail` was too short to hold the trailer it announces.
    /// `verifyingChecksum: false` skips the checksum, for a file already verified (same inode, still sealed).
    static func parse(tail: UnsafeRawBufferPointer, fileSize: Int, needed: inout Int, verifyingChecksum: Bool = true) -> DiskEntryFile? {
        needed = 0
        let count = tail.count
        guard count >= fixedSize, fileSize >= fixedSize, count <= fileSize else { return nil }
        let fixed = count - fixedSize
        guard magic.elementsEqual(UnsafeRawBufferPointer(rebasing: tail[(count - 8)...])) else { return nil }
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: tail.loadUnaligned(fromByteOffset: fixed + offset, as: T.self))
        }
        let dataSize = load(0, UInt64.self)
        let created = Double(bitPattern: load(8, UInt64.self))
        let value = Double(bitPattern: load(16, UInt64.self))
        let kind = load(24, UInt8.self)
        let keyLength = Int(load(28, UInt32.self))
        let metaLength = Int(load(32, UInt32.self))
        guard dataSize <= UInt64(Int.max / 2), keyLength <= 1 << 20, metaLength <= 1 << 20,
            Int(dataSize) + keyLength + metaLength + fixedSize == fileSize
        else { return nil }
        let trailerSize = keyLength + metaLength + fixedSize
        guard count >= trailerSize else {
            needed = trailerSize
            return nil
        }
        let start = count - trailerSize
        if verifyingChecksum {
            let sum = checksum(UnsafeRawBufferPointer(rebasing: tail[start..<(count - 16)]))
            guard sum.elementsEqual(UnsafeRawBufferPointer(rebasing: tail[(count - 16)..<(count - 8)])) else { return nil }
        }
        guard let policy = decode(kind: kind, value: value),
            let key = String(validating: UnsafeRawBufferPointer(rebasing: tail[start..<(start + keyLength)]), as: UTF8.self)
        else { return nil }
        let meta = Data(UnsafeRawBufferPointer(rebasing: tail[(start + keyLength)..<(start + keyLength + metaLength)]))
        return DiskEntryFile(key: key, dataSize: Int(dataSize), created: created, policy: policy, meta: meta)
    }

    // MARK: Times

    /// The sealed mtime (whole seconds) for an absolute expiry: rounded down, so an entry expires
    /// up to a second early, never late (a source whose TTL ran out is fetched again on time);
    /// 0 for never, clamped to 1...Int32.max (so that every file system can hold it).
    static func sealSeconds(expiry: TimeInterval?) -> Int64 {
        guard let expiry else { return 0 }
        guard expiry.isFinite else { return expiry > 0 ? 0 : 1 }
        return Int64(min(max(expiry.rounded(.down), 1), Double(Int32.max)))
    }

    /// The expiry a sealed mtime stands for (`nil` = never).
    static func expiry(sealSeconds: Int64) -> TimeInterval? {
        sealSeconds == 0 ? nil : TimeInterval(sealSeconds)
    }

    /// Absolute expiry (seconds since 1970, `nil` = never) of an entry stored or extended at `now`.
    static func expiry(of expiration: StorageExpiration, from now: TimeInterval) -> TimeInterval? {
        switch expiration {
        case .never: nil
        case .seconds(let s): now + s
        case .days(let d): now + Double(d) * 86_400
        case .date(let date): date.timeIntervalSince1970
        case .expired: -.infinity
        }
    }

    static func encode(_ policy: StorageExpiration) -> (UInt8, Double) {
        switch policy {
        case .never, .expired: (0, 0)
        case .seconds(let s): (1, s)
        case .days(let d): (2, Double(d))
        case .date(let date): (3, date.timeIntervalSince1970)
        }
    }

    static func decode(kind: UInt8, value: Double) -> StorageExpiration? {
        switch kind {
        case 0: .never
        case 1: .seconds(value)
        case 2: value.isFinite && abs(value) < 1e12 ? .days(Int(value)) : nil
        case 3: .date(Date(timeIntervalSince1970: value))
        default: nil
        }
    }
}
