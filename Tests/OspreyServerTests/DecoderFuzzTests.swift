import Foundation
import Osprey
import OspreyTestSupport
import Testing

/// Decoders fuzzed through the server, deterministically: mutated test images (bit flips, header
/// bytes, truncations, JPEG size fields that lie, spliced slices) served by a loopback origin. Every
/// answer is a whole image that fits the request or a 4xx with a one-line reason. The longer,
/// seeded run over every test image is part of the soak (`Benchmarks/soak/`).
@Suite("Decoder fuzz through the server: mutated images answer an image or a 4xx", .timeLimit(.minutes(5)))
struct DecoderFuzzTests {
    /// The `seed`th mutation of `data` and its kind.
    static func mutate(_ data: Data, seed: UInt64) -> (kind: String, data: Data) {
        var rng = SplitMix64(seed: seed)
        var bytes = [UInt8](data)
        switch seed % 5 {
        case 0:
            for _ in 0..<Int.random(in: 1...24, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            }
            return ("bit flips", Data(bytes))
        case 1:
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                bytes[Int.random(in: 0..<min(bytes.count, 512), using: &rng)] = [0, 0xFF, 0x7F, 0x80].randomElement(using: &rng)!
            }
            return ("header bytes", Data(bytes))
        case 2:
            return ("truncated", Data(bytes.prefix(Int.random(in: 1..<bytes.count, using: &rng))))
        case 3:
            // A JPEG start-of-frame whose height and width lie (0, huge, or 1 x huge).
            if let sof = (0..<bytes.count - 9).first(where: { bytes[$0] == 0xFF && (bytes[$0 + 1] == 0xC0 || bytes[$0 + 1] == 0xC2) }) {
                let (height, width): (UInt16, UInt16) = [(0, 0), (65535, 65535), (1, 65535), (7, 3)].randomElement(using: &rng)!
                bytes[sof + 5] = UInt8(height >> 8)
                bytes[sof + 6] = UInt8(height & 0xFF)
                bytes[sof + 7] = UInt8(width >> 8)
                bytes[sof + 8] = UInt8(width & 0xFF)
                return ("size lie", Data(bytes))
            }
            return ("truncated", Data(bytes.prefix(bytes.count / 2)))
        default:
            let start = Int.random(in: 0..<bytes.count, using: &rng)
            let slice = bytes[start..<min(bytes.count, start + Int.random(in: 1...4096, using: &rng))]
            bytes.insert(contentsOf: slice, at: Int.random(in: 0..<bytes.count, using: &rng))
            return ("splice", Data(bytes))
        }
    }

    @Test(
        "40 mutations each of a JPEG and a PNG: an image that fits, or a 4xx with a reason",
        arguments: [
            ("photo.jpg", "image/jpeg"), ("alpha.png", "image/png")
        ])
    func mutatedImages(name: String, contentType: String) async throws {
        let original = name.hasSuffix(".jpg") ? TestImages.photo : TestImages.transparentPNG
        let origin = try await LoopbackOrigin.start()
        let server = try await ServerHarness.start()
        for seed in UInt64(0)..<40 {
            let (kind, data) = Self.mutate(original, seed: seed)
            let path = "/\(seed)-\(name)"
            origin.set(path, body: data, contentType: contentType)
            let reply = try await server.get("/unsafe/fit-in/64x64/\(origin.address(path))")
            let context = Comment(rawValue: "seed \(seed) (\(kind)): \(reply.status) \(reply.text.prefix(160))")
            if reply.status == 200 {
                let image = try #require(reply.image, context)
                #expect(image.width <= 64 && image.height <= 64 && image.width > 0 && image.height > 0, context)
            } else {
                #expect((400..<500).contains(reply.status), context)
                let reason = reply.text.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(!reason.isEmpty && !reason.contains("\n"), context)
            }
        }
        await server.stop()
        await origin.stop()
    }
}
