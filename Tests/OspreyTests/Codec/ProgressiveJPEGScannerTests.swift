import Foundation
import Testing

@testable import Osprey

/// Progressive and baseline JPEGs made from a test image, for the scanner and the preview tests.
enum ProgressiveTestData {
    /// hubble_deep_field.jpg (1000 × 872) saved as a progressive JPEG (libvips `interlace`).
    static func progressive() throws -> Data {
        try ImageEncoder(format: .jpeg, quality: 85, interlace: true).encode(TestData.image("hubble_deep_field.jpg"))
    }

    /// The same image as a baseline JPEG.
    static func baseline() throws -> Data {
        try ImageEncoder(format: .jpeg, quality: 85).encode(TestData.image("hubble_deep_field.jpg"))
    }

    /// The scan boundaries of `data`, found by feeding it to a scanner `step` bytes at a time.
    static func boundaries(_ data: Data, step: Int = 1) -> (boundaries: [Int], scanner: ProgressiveJPEGScanner) {
        var scanner = ProgressiveJPEGScanner()
        var boundaries: [Int] = []
        var end = 0
        while end < data.count {
            end = min(data.count, end + step)
            if data.prefix(end).withUnsafeBytes({ scanner.scan($0) }) { boundaries.append(scanner.boundary) }
        }
        return (boundaries, scanner)
    }
}

@Suite("Progressive JPEG scanner", .timeLimit(.minutes(2)))
struct ProgressiveJPEGScannerTests {
    @Test("a progressive JPEG: SOF2 seen, every scan found at a marker, each prefix closed with EOI decodes at full size")
    func progressive() throws {
        let data = try ProgressiveTestData.progressive()
        let header = try ImageDecoder().header(of: data)
        let (boundaries, scanner) = ProgressiveTestData.boundaries(data, step: 997)
        #expect(scanner.verdict == .progressive)
        #expect(scanner.reachedEnd)
        #expect(boundaries.count >= 5, "libjpeg's standard script has ten scans for colour; found \(boundaries.count) boundaries")
        #expect(boundaries == boundaries.sorted() && Set(boundaries).count == boundaries.count)
        #expect(boundaries.last == data.count - 2, "the last scan ends at the EOI marker")
        for boundary in boundaries {
            #expect(data[boundary] == 0xFF, "a boundary is a marker")
            let prefix = data.prefix(boundary) + Data([0xFF, 0xD9])
            let image = try Image(data: prefix)
            #expect(image.width == header.width && image.height == header.height)
        }
    }

    @Test("fed a byte at a time, the scanner finds the same boundaries as fed in large chunks")
    func byteByByte() throws {
        let data = try ProgressiveTestData.progressive()
        let small = ProgressiveTestData.boundaries(data, step: 1)
        let large = ProgressiveTestData.boundaries(data, step: 65_536)
        #expect(small.scanner.completedScans == large.scanner.completedScans)
        #expect(small.boundaries.last == large.boundaries.last)
        #expect(Set(large.boundaries).isSubset(of: Set(small.boundaries)))
    }

    @Test("a baseline JPEG, a PNG and garbage: the scanner gives up at once and finds no scan")
    func givesUp() throws {
        let baseline = try ProgressiveTestData.baseline()
        var scanner = ProgressiveJPEGScanner()
        // The frame header comes within the first kilobyte; the scanner stops there.
        _ = baseline.prefix(1024).withUnsafeBytes { scanner.scan($0) }
        #expect(scanner.verdict == .notProgressive)
        _ = baseline.withUnsafeBytes { scanner.scan($0) }
        #expect(scanner.completedScans == 0 && scanner.boundary == 0)

        for data in [try TestData.data("hopper.png"), Data("not an image at all".utf8), Data([0xFF, 0xD8, 0x00, 0x00])] {
            var scanner = ProgressiveJPEGScanner()
            _ = data.withUnsafeBytes { scanner.scan($0) }
            #expect(scanner.verdict == .notProgressive)
            #expect(scanner.boundary == 0)
        }
    }

    @Test("a shorter body (a download started again) starts the walk over")
    func restart() throws {
        let data = try ProgressiveTestData.progressive()
        var scanner = ProgressiveJPEGScanner()
        _ = data.withUnsafeBytes { scanner.scan($0) }
        let scans = scanner.completedScans
        _ = data.prefix(10).withUnsafeBytes { scanner.scan($0) }
        #expect(scanner.completedScans == 0)
        _ = data.withUnsafeBytes { scanner.scan($0) }
        #expect(scanner.completedScans == scans)
    }
}
