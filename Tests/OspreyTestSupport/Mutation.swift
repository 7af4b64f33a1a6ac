import CZlib
import Foundation

/// Deterministic damage to an image's bytes, for fuzzing decoders through a server (the soak's
/// `/mut/<seed>/<name>` route of ``LoopbackOrigin``): the same input and seed always give the same
/// bytes. By `seed % 5`: bit flips anywhere, byte changes in the first 512 bytes, a truncation,
/// a header field that lies about the image's size (PNG `IHDR` with its CRC fixed, JPEG SOF, GIF
/// screen descriptor, WebP `VP8X`/`VP8 ` canvas; else a cut at half), or a slice of the image
/// copied elsewhere in it.
public enum Mutation {
    /// `data` damaged as `seed` picks (see the type); `data` itself when it is empty.
    public static func mutate(_ data: Data, seed: Int) -> Data {
        guard !data.isEmpty else { return data }
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: seed))
        var bytes = [UInt8](data)
        switch seed % 5 {
        case 0:
            for _ in 0..<Int.random(in: 1...24, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            }
        case 1:
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let values: [UInt8] = [0, 0xFF, 0x7F, 0x80, UInt8.random(in: 0...255, using: &random)]
                bytes[Int.random(in: 0..<min(bytes.count, 512), using: &random)] = values.randomElement(using: &random)!
            }
        case 2:
            bytes = Array(bytes.prefix(Int.random(in: 1...max(1, bytes.count - 1), using: &random)))
        case 3:
            bytes = sizeLie(bytes, &random) ?? Array(bytes.prefix(bytes.count / 2))
        default:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let end = min(bytes.count, start + Int.random(in: 1...4096, using: &random))
            bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0..<bytes.count, using: &random))
        }
        return Data(bytes)
    }

    /// The image with its declared size replaced by an absurd or empty one, for the formats it knows.
    private static func sizeLie(_ bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8]? {
        var out = bytes
        if let at = find(bytes, "IHDR"), at >= 4, bytes.count >= at + 21 {
            let sizes: [(UInt32, UInt32)] = [(0, 1), (1, 0), (65535, 65535), (UInt32(Int32.max), 1), (40000, 40000), (7, 3)]
            let (width, height) = sizes.randomElement(using: &random)!
            out.replaceSubrange(at + 4..<at + 12, with: bigEndian(width, 4) + bigEndian(height, 4))
            let crc = crc32(Array(out[at..<at + 17]))
            out.replaceSubrange(at + 17..<at + 21, with: bigEndian(crc, 4))
            return out
        }
        for marker: [UInt8] in [[0xFF, 0xC0], [0xFF, 0xC2], [0xFF, 0xC1]] {
            if let at = find(bytes, marker), at > 0, bytes.count >= at + 9 {
                let (height, width) = [(0, 0), (65535, 65535), (1, 65535), (60000, 60000), (7, 3)].randomElement(using: &random)!
                out.replaceSubrange(at + 5..<at + 9, with: bigEndian(UInt32(height), 2) + bigEndian(UInt32(width), 2))
                return out
            }
        }
        if bytes.starts(with: Array("GIF".utf8)), bytes.count >= 10 {
            let side = [0, 65535, 1].randomElement(using: &random)!
            out.replaceSubrange(6..<10, with: [UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8)])
            return out
        }
        if let at = find(bytes, "VP8X"), bytes.count >= at + 18 {
            let side = [(1 << 24) - 1, 0, 40000].randomElement(using: &random)!
            let three = [UInt8(side & 0xFF), UInt8(side >> 8 & 0xFF), UInt8(side >> 16 & 0xFF)]
            out.replaceSubrange(at + 12..<at + 18, with: three + three)
            return out
        }
        if let at = find(bytes, "VP8 "), bytes.count >= at + 18 {
            let side = [16383, 0, 1].randomElement(using: &random)!
            out.replaceSubrange(at + 14..<at + 18, with: [UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8)])
            return out
        }
        return nil
    }

    private static func find(_ bytes: [UInt8], _ text: String) -> Int? { find(bytes, Array(text.utf8)) }

    private static func find(_ bytes: [UInt8], _ pattern: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }
    }

    private static func bigEndian(_ value: UInt32, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32(count - 1 - $0))) }
    }

    /// The CRC-32 of a PNG chunk (zlib's).
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        UInt32(truncatingIfNeeded: bytes.withUnsafeBufferPointer { CZlib.crc32(0, $0.baseAddress, UInt32($0.count)) })
    }
}
