import Foundation
import OspreyTestSupport

@testable import Osprey

/// Locates the repository's test images (through ``FixtureImages``) and makes damaged copies of
/// files.
enum TestData {
    /// ``FixtureImages/directory``: `$OSPREY_TESTDATA`, else `Tests/Fixtures/images`.
    static var imagesDirectory: URL { FixtureImages.directory }

    static func url(_ name: String) -> URL { imagesDirectory.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    static func image(_ name: String, options: DecodingOptions = .default) throws -> Image {
        try Image(data: data(name), options: options)
    }

    /// Every image file in the test data folder.
    static var allImageNames: [String] { FixtureImages.allNames }
}

/// Pixel comparisons with a tolerance.
enum Pixels {
    /// Mean absolute difference per byte between two equally sized RGBA buffers (0...255).
    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count, "buffers differ in size")
        var total = 0
        for index in a.indices { total += abs(Int(a[index]) - Int(b[index])) }
        return Double(total) / Double(max(1, a.count))
    }

    /// Mean of each RGBA channel.
    static func channelMeans(_ rgba: [UInt8]) -> [Double] {
        var sums = [Double](repeating: 0, count: 4)
        for index in rgba.indices { sums[index % 4] += Double(rgba[index]) }
        return sums.map { $0 / Double(max(1, rgba.count / 4)) }
    }

    /// The RGBA bytes of the pixel at (`x`, `y`) of the first frame.
    static func pixel(_ image: Image, x: Int, y: Int) throws -> [UInt8] {
        let rgba = try image.rgbaPixels()
        let offset = (y * image.width + x) * 4
        return Array(rgba[offset..<offset + 4])
    }
}
