import Foundation
import Synchronization
import Testing

@testable import Osprey

/// The preview decoder of one download alone, fed a progressive JPEG a scan at a time as the
/// previewer feeds it: the body up to two bytes past the scan's end (the marker that ends it).
@Suite("Progressive JPEG preview decoder", .timeLimit(.minutes(2)))
struct ProgressiveJPEGDecoderTests {
    /// The previews of `data` fed a scan at a time, with the scans each came from.
    static func previews(
        of data: Data, decoder: any ImageDecoding = ImageDecoder(), plan: DecodePlan? = nil
    ) throws -> [(image: Image, folded: Bool)] {
        let previewDecoder = ProgressiveJPEGDecoder(decoder: decoder, options: .default, plan: plan)
        var previews: [(image: Image, folded: Bool)] = []
        for boundary in ProgressiveTestData.boundaries(data, step: 4096).boundaries {
            let body = data.prefix(min(data.count, boundary + 2))
            if let preview = try previewDecoder.preview(of: body, scansEnd: boundary) { previews.append(preview) }
        }
        return previews
    }

    @Test("scan by scan: each preview at full size, closer to the final image than the last; after the last scan, the full decode's pixels")
    func scanByScan() throws {
        let data = try ProgressiveTestData.progressive()
        let final = try ImageDecoder().decode(data)
        let finalPixels = try final.rgbaPixels()
        let previews = try Self.previews(of: data)
        #expect(previews.count >= 5)
        var differences: [Double] = []
        for preview in previews {
            #expect(preview.image.width == final.width && preview.image.height == final.height)
            #expect(!preview.folded)
            differences.append(Pixels.meanDifference(try preview.image.rgbaPixels(), finalPixels))
        }
        for index in differences.indices.dropFirst() {
            #expect(differences[index] <= differences[index - 1], "mean differences from the final image: \(differences)")
        }
        #expect(differences.first.map { $0 > 1 } ?? false, "the first scan is only an approximation: \(differences)")
        #expect((differences.last ?? .infinity) < 0.01, "all scans decoded: the final pixels: \(differences)")
    }

    @Test("the same body handed over again: no new scan, no preview")
    func noNewScan() throws {
        let data = try ProgressiveTestData.progressive()
        let boundary = try #require(ProgressiveTestData.boundaries(data, step: 4096).boundaries.dropFirst(2).first)
        let body = data.prefix(boundary + 2)
        let previewDecoder = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil)
        #expect(try previewDecoder.preview(of: body, scansEnd: boundary) != nil)
        #expect(try previewDecoder.preview(of: body, scansEnd: boundary) == nil)
    }

    @Test("a folded downsample: every preview has the planned decode's size, as the final image does")
    func plannedSize() throws {
        let data = try ProgressiveTestData.progressive()
        let plan = try #require(DecodePlan(processors: [ImageProcessors.Downsample(width: 120, height: 120)], decoding: .default))
        let final = try ImageDecoder().decode(data, plan: plan)
        #expect(final.folded)
        let previews = try Self.previews(of: data, plan: plan)
        #expect(previews.count >= 5)
        for preview in previews {
            #expect(preview.folded)
            #expect(preview.image.width == final.image.width && preview.image.height == final.image.height)
        }
        let last = try #require(previews.last)
        #expect(Pixels.meanDifference(try last.image.rgbaPixels(), try final.image.rgbaPixels()) < 0.5)
    }

    @Test("an EXIF orientation: previews are turned upright as the final image is")
    func orientation() throws {
        // The progressive image with hopper_orientation_6.jpg's EXIF segment (orientation 6: a
        // quarter turn) put after its SOI marker.
        let exifSource = try TestData.data("hopper_orientation_6.jpg")
        let exif = try #require(Self.segment(0xE1, in: exifSource))
        var data = try ProgressiveTestData.progressive()
        data.insert(contentsOf: exif, at: 2)
        let header = try ImageDecoder().header(of: data)
        #expect(header.orientation == .right)
        let final = try ImageDecoder().decode(data)
        #expect(final.width == header.height && final.height == header.width)
        let previews = try Self.previews(of: data)
        #expect(previews.count >= 5)
        for preview in previews {
            #expect(preview.image.width == final.width && preview.image.height == final.height)
        }
        let last = try #require(previews.last)
        #expect(Pixels.meanDifference(try last.image.rgbaPixels(), try final.rgbaPixels()) < 0.01)
    }

    @Test("a decoder other than Osprey's: each preview is its decode of the prefix closed with EOI")
    func otherDecoder() throws {
        let data = try ProgressiveTestData.progressive()
        let counting = CountingDecoder()
        let previews = try Self.previews(of: data, decoder: counting)
        #expect(previews.count >= 5)
        #expect(counting.count == previews.count)
        #expect(counting.lastTail == [0xFF, 0xD9])
    }

    @Test("bad bytes: a baseline JPEG is a decoding error, and so is every later call; garbage after a scan is an error or no preview, never a crash")
    func badBytes() throws {
        let baseline = try ProgressiveTestData.baseline()
        let previewDecoder = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil)
        #expect(throws: OspreyError.self) { try previewDecoder.preview(of: baseline, scansEnd: baseline.count - 2) }
        #expect(throws: OspreyError.self) { try previewDecoder.preview(of: baseline, scansEnd: baseline.count - 2) }

        let data = try ProgressiveTestData.progressive()
        let first = try #require(ProgressiveTestData.boundaries(data, step: 4096).boundaries.first)
        var damaged = data.prefix(first + 2)
        damaged.append(Data(repeating: 0x5A, count: 20_000))
        let garbage = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil)
        _ = try garbage.preview(of: data.prefix(first + 2), scansEnd: first)
        // Garbage where the next marker segment should be.
        do {
            _ = try garbage.preview(of: damaged, scansEnd: damaged.count - 2)
        } catch {
            guard case .decoding = error else {
                Issue.record("expected a decoding error, got \(error)")
                return
            }
        }
    }

    @Test("damaged scans (bytes overwritten after the header, 40 seeded variants): each call returns or throws, none crashes or hangs")
    func damagedScans() throws {
        let data = try ProgressiveTestData.progressive()
        let boundaries = ProgressiveTestData.boundaries(data, step: 4096).boundaries
        let first = try #require(boundaries.first)
        var seed: UInt64 = 42
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        for _ in 0..<40 {
            var damaged = [UInt8](data)
            for _ in 0..<(1 + next() % 64) {
                let position = first / 2 + next() % (data.count - first / 2)
                damaged[position] = UInt8(truncatingIfNeeded: next())
            }
            let body = Data(damaged)
            let previewDecoder = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil)
            for boundary in boundaries {
                let prefix = body.prefix(min(body.count, boundary + 2))
                do {
                    if let preview = try previewDecoder.preview(of: prefix, scansEnd: boundary) {
                        #expect(preview.image.width > 0 && preview.image.height > 0)
                    }
                } catch {
                    guard case .decoding = error else {
                        Issue.record("expected a decoding error, got \(error)")
                        return
                    }
                }
            }
        }
    }

    @Test("over the coefficient budget a download's previews decode each prefix whole: they still come, the same size")
    func overBudget() throws {
        let data = try ProgressiveTestData.progressive()
        let boundaries = ProgressiveTestData.boundaries(data, step: 4096).boundaries
        let whole = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil, budget: 0)
        var sizes: [Int] = []
        for boundary in boundaries {
            let preview = try #require(try whole.preview(of: data.prefix(min(data.count, boundary + 2)), scansEnd: boundary))
            sizes.append(preview.image.width)
        }
        #expect(sizes.count == boundaries.count && Set(sizes).count == 1)
        // A baseline JPEG, which the incremental decoder refuses, decodes whole.
        let baseline = try ProgressiveTestData.baseline()
        let wholeBaseline = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: .default, plan: nil, budget: 0)
        #expect(try wholeBaseline.preview(of: baseline, scansEnd: baseline.count - 2) != nil)
    }

    @Test("a source above the pixel limit is refused before any coefficient buffer is made")
    func pixelLimit() throws {
        let data = try ProgressiveTestData.progressive()
        let first = try #require(ProgressiveTestData.boundaries(data, step: 4096).boundaries.first)
        var options = DecodingOptions.default
        options.maxSourcePixels = 1000
        let previewDecoder = ProgressiveJPEGDecoder(decoder: ImageDecoder(), options: options, plan: nil)
        #expect(throws: OspreyError.self) { try previewDecoder.preview(of: data.prefix(first + 2), scansEnd: first) }
    }

    /// The bytes of the first marker segment `marker` (`FF marker length…`) in `jpeg`.
    static func segment(_ marker: UInt8, in jpeg: Data) -> Data? {
        let bytes = [UInt8](jpeg)
        var offset = 2
        while offset + 3 < bytes.count, bytes[offset] == 0xFF {
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if bytes[offset + 1] == marker { return Data(bytes[offset..<offset + 2 + length]) }
            if bytes[offset + 1] == 0xDA { return nil }
            offset += 2 + length
        }
        return nil
    }
}

/// Osprey's decoder behind another type: counts its decodes and keeps the last bytes' tail.
private final class CountingDecoder: ImageDecoding {
    private let state = Mutex<(count: Int, lastTail: [UInt8])>((0, []))

    var count: Int { state.withLock { $0.count } }
    var lastTail: [UInt8] { state.withLock { $0.lastTail } }

    func decode(_ data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        state.withLock { $0 = ($0.count + 1, Array(data.suffix(2))) }
        return try ImageDecoder(options: options).decode(data)
    }
}
