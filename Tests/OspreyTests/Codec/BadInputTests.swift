import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Bad input", .timeLimit(.minutes(5)))
struct BadInputTests {
    /// A minimal little-endian TIFF whose header declares `width` x `height` 8-bit grey pixels,
    /// with a single byte of pixel data: a decompression bomb in 100-odd bytes.
    static func tiffBomb(width: UInt32, height: UInt32) -> Data {
        tiff(width: width, height: height, grey: [0x80])
    }

    /// A minimal uncompressed 8-bit grey TIFF declaring `width` x `height` with `grey` as its strip.
    static func tiff(width: UInt32, height: UInt32, grey: [UInt8]) -> Data {
        var bytes: [UInt8] = Array("II".utf8) + [42, 0] + le32(8)
        let entries: [(UInt16, UInt16, UInt32)] = [  // tag, type (3 short, 4 long), value
            (256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
            (273, 4, 0), (277, 3, 1), (278, 4, height), (279, 4, UInt32(grey.count))
        ]
        let dataOffset = UInt32(8 + 2 + entries.count * 12 + 4)
        bytes += le16(UInt16(entries.count))
        for (tag, type, value) in entries {
            bytes += le16(tag) + le16(type) + le32(1)
            let stored = tag == 273 ? dataOffset : value
            bytes += type == 3 ? le16(UInt16(stored)) + [0, 0] : le32(stored)
        }
        bytes += le32(0) + grey
        return Data(bytes)
    }

    @Test("a tiny file declaring 100k x 100k pixels is refused from its header")
    func tiffBombIsRefused() throws {
        let bomb = Self.tiffBomb(width: 100_000, height: 100_000)
        #expect(bomb.count < 200)
        #expect(ImageFormat(sniffing: bomb) == .tiff)
        #expect(throws: OspreyError.decoding(.tooLarge(width: 100_000, height: 100_000, frames: 1, limitPixels: 50_000_000))) {
            try Image(data: bomb)
        }
        // Thumbnail decoding is refused just the same: the limit is on the source.
        #expect(throws: OspreyError.decoding(.tooLarge(width: 100_000, height: 100_000, frames: 1, limitPixels: 50_000_000))) {
            try Image(data: bomb, options: .init(thumbnail: .init(maxPixelSize: 64)))
        }
    }

    @Test("a JPEG whose header declares 65000 x 65000 is refused")
    func jpegBombIsRefused() throws {
        let bomb = try ImageBombs.jpeg(width: 65000, height: 65000)
        #expect(throws: OspreyError.decoding(.tooLarge(width: 65000, height: 65000, frames: 1, limitPixels: 50_000_000))) {
            try Image(data: bomb)
        }
    }

    @Test("a WebP whose frame header declares 16383 x 16383 is refused from libwebp's reading of it")
    func webpSizeLieIsRefused() throws {
        let lie = try Self.webpSizeLie()
        #expect(lie.withUnsafeBytes { ImageDecoder.declaredWebPSize($0) }! == (16383, 16383))
        #expect(throws: OspreyError.decoding(.tooLarge(width: 16383, height: 16383, frames: 1, limitPixels: 50_000_000))) {
            try Image(data: lie)
        }
        #expect(throws: OspreyError.decoding(.tooLarge(width: 16383, height: 16383, frames: 1, limitPixels: 50_000_000))) {
            try ImageDecoder().header(of: lie)
        }
        // That libvips never maps the 1 GiB canvas is checked under an address-space limit:
        // CLITests.webpSizeLieUnderAddressSpaceLimit.
    }

    /// hopper.webp (a simple lossy file) with its VP8 frame header's 14-bit width and height
    /// (at 26 and 28) set to 16383.
    static func webpSizeLie() throws -> Data {
        var bytes = [UInt8](try TestData.data("hopper.webp"))
        try #require(bytes[12..<16].elementsEqual("VP8 ".utf8) && bytes[23..<26] == [0x9d, 0x01, 0x2a])
        bytes.replaceSubrange(26..<30, with: [0xff, 0x3f, 0xff, 0x3f])
        return Data(bytes)
    }

    @Test("the source limit counts every frame and is configurable")
    func limitCountsFrames() throws {
        let data = try TestData.data("iss634.gif")
        let limit = 245 * 245 * 10
        #expect(throws: OspreyError.decoding(.tooLarge(width: 245, height: 245, frames: 42, limitPixels: limit))) {
            try Image(data: data, options: .init(maxSourcePixels: limit))
        }
        // One frame fits.
        #expect(try Image(data: data, options: .init(firstFrameOnly: true, maxSourcePixels: limit)).frameCount == 1)
    }

    @Test("empty, unknown and unreadable input give typed errors")
    func unknownInput() throws {
        #expect(throws: OspreyError.decoding(.emptyData)) { try Image(data: Data()) }
        #expect(throws: OspreyError.decoding(.unsupportedFormat(leadingBytes: "3c 68 74 6d 6c 3e"))) { try Image(data: Data("<html>".utf8)) }
        #expect(throws: OspreyError.decoding(.unsupportedFormat(leadingBytes: "50 4b 03 04 14 00"))) {
            try Image(data: Data([0x50, 0x4B, 0x03, 0x04, 0x14, 0x00]))
        }
        // A PDF's magic with nothing of a PDF after it: poppler's reading of it, typed.
        let pdf = #expect(throws: OspreyError.self) { try Image(data: Data("%PDF-1.4 ...".utf8)) }
        #expect(pdf?.description.hasPrefix("cannot decode pdf image") == true, "\(String(describing: pdf))")
        let missing = URL(fileURLWithPath: "/nonexistent/osprey/missing.png")
        do {
            _ = try Image(contentsOf: missing)
            Issue.record("decoding a missing file succeeded")
        } catch {
            guard case .decoding(.unreadableFile(let path, _)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == missing.path)
        }
    }

    static let damageSources = [
        "hopper.jpg", "hopper.png", "hopper.gif", "hopper.webp", "hopper.avif", "iss634.gif", "logo.png", "rocket.jpg", "pil_sample_cmyk.jpg"
    ]

    @Test("truncated copies give typed decoding errors", arguments: damageSources)
    func truncatedCopies(name: String) throws {
        let data = try TestData.data(name)
        for fraction in [0.02, 0.25, 0.5, 0.75, 0.95] {
            let cut = data.prefix(max(12, Int(Double(data.count) * fraction)))
            do {
                _ = try Image(data: cut)
                Issue.record("\(name) cut to \(cut.count) of \(data.count) bytes decoded without an error")
            } catch {
                guard case .decoding = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test("byte-flipped copies decode or fail with a typed error, never crash", arguments: damageSources)
    func corruptedCopies(name: String) throws {
        let original = [UInt8](try TestData.data(name))
        var generator = SplitMix64(seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude))
        for round in 0..<12 {
            var bytes = original
            // Damage the first 2 KB (headers, tables) in some rounds, anywhere in the others.
            let span = round % 2 == 0 ? min(2048, bytes.count) : bytes.count
            for _ in 0..<(1 + round) {
                let index = Int.random(in: 8..<span, using: &generator)
                bytes[index] ^= UInt8.random(in: 1...255, using: &generator)
            }
            do {
                let image = try Image(data: Data(bytes))
                #expect(image.width > 0 && image.height > 0)
            } catch {
                guard case .decoding = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
            }
        }
    }
}

private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
