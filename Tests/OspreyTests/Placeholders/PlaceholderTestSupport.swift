import Foundation
import Testing

@testable import Osprey

extension PlaceholderVectors {
    /// A synthetic raster: the formula `synthetic()` in Tests/Fixtures/placeholder-vectors/make_vectors.py
    /// (gradients; with `alpha`, the corners outside a centred circle nearly transparent).
    static func synthetic(width: Int, height: Int, alpha: Bool) -> [UInt8] {
        var rgba: [UInt8] = []
        rgba.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let r = x * 255 / max(1, width - 1)
                let g = y * 255 / max(1, height - 1)
                let b = 255 - (x * y * 255) / max(1, (width - 1) * (height - 1))
                let dx = 2 * x - width, dy = 2 * y - height, side = min(width, height)
                let inside = dx * dx + dy * dy <= side * side
                let a = !alpha || inside ? 255 : (x * 7 + y * 3) % 64
                rgba += [UInt8(r), UInt8(g), UInt8(b), UInt8(a)]
            }
        }
        return rgba
    }

    /// Every raster the vectors were made from, by name: the test images' committed bytes and the
    /// synthetic ones.
    static let rasters: [String: (width: Int, height: Int, rgba: [UInt8])] = {
        var rasters: [String: (width: Int, height: Int, rgba: [UInt8])] = [:]
        for raster in imageRasters {
            rasters[raster.name] = (raster.width, raster.height, bytes(raster.rgbaBase64))
        }
        for raster in syntheticRasters {
            rasters[raster.name] = (raster.width, raster.height, synthetic(width: raster.width, height: raster.height, alpha: raster.alpha))
        }
        return rasters
    }()

    static func bytes(_ base64: String) -> [UInt8] {
        [UInt8](Data(base64Encoded: base64) ?? Data())
    }
}

/// Comparisons of decoded placeholder pixels.
enum PlaceholderPixels {
    /// The largest absolute difference between two equally long byte buffers.
    static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// RGBA bytes with every fourth byte (alpha) removed.
    static func rgb(_ rgba: [UInt8]) -> [UInt8] {
        rgba.enumerated().filter { $0.offset % 4 != 3 }.map(\.element)
    }

    /// The mean difference between `decoded` and the first frame of `original`, both shrunk
    /// (stretched) by libvips to 8 x 8: the scale a placeholder stands for, where a few DCT
    /// components can match the image; finer detail, which no hash keeps, does not count. In RGB
    /// (0...255) premultiplied by alpha (the colour of a transparent pixel does not count).
    static func meanDifference(decoded: Image, original: Image) throws -> Double {
        let first = try #require(original.frame(at: 0))
        let shrink = ImageProcessors.Resize(width: 8, height: 8, contentMode: .stretch)
        let ours = try shrink.process(decoded), reference = try shrink.process(first)
        return Pixels.meanDifference(premultipliedRGB(try ours.rgbaPixels()), premultipliedRGB(try reference.rgbaPixels()))
    }

    /// RGB bytes, each multiplied by its pixel's alpha.
    static func premultipliedRGB(_ rgba: [UInt8]) -> [UInt8] {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(rgba.count / 4 * 3)
        for pixel in stride(from: 0, to: rgba.count, by: 4) {
            let alpha = Int(rgba[pixel + 3])
            for channel in 0..<3 { rgb.append(UInt8(Int(rgba[pixel + channel]) * alpha / 255)) }
        }
        return rgb
    }

    /// Whether `error` is an invalid placeholder hash error for `algorithm`.
    static func isInvalidHash(_ error: OspreyError, algorithm: String) -> Bool {
        if case .decoding(.invalidPlaceholderHash(let name, _, _)) = error { return name == algorithm }
        return false
    }

    /// Whether `error` is an invalid argument error.
    static func isInvalidArgument(_ error: OspreyError) -> Bool {
        if case .processing(.invalidArgument) = error { return true }
        return false
    }
}
