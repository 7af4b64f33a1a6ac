import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("BlurHash", .timeLimit(.minutes(5)))
struct BlurHashTests {
    @Test("the encoder writes PyPI blurhash's strings for the same raster, at every component count")
    func encoderMatchesReference() throws {
        #expect(PlaceholderVectors.blurHashes.count >= 30)
        for vector in PlaceholderVectors.blurHashes {
            let raster = try #require(PlaceholderVectors.rasters[vector.raster])
            let hash = try BlurHash(
                rgba: raster.rgba, width: raster.width, height: raster.height, componentsX: vector.componentsX,
                componentsY: vector.componentsY)
            #expect(hash.string == vector.hash, "\(vector.raster) \(vector.componentsX)x\(vector.componentsY)")
            #expect((hash.componentsX, hash.componentsY) == (vector.componentsX, vector.componentsY))
        }
    }

    @Test("hashes made by the reference decode to its pixels, with punch")
    func decoderMatchesReference() throws {
        for vector in PlaceholderVectors.blurHashDecodes {
            let hash = try BlurHash(string: vector.hash)
            let image = try hash.image(width: vector.width, height: vector.height, punch: vector.punch)
            #expect((image.width, image.height) == (vector.width, vector.height))
            let rgba = try image.rgbaPixels()
            #expect(stride(from: 3, to: rgba.count, by: 4).allSatisfy { rgba[$0] == 255 }, "opaque")
            let expected = PlaceholderVectors.bytes(vector.rgbBase64)
            #expect(PlaceholderPixels.maxDifference(PlaceholderPixels.rgb(rgba), expected) <= 1, "\(vector.hash) punch \(vector.punch)")
        }
    }

    @Test("the average colour is the first component")
    func averageColor() throws {
        let hash = try BlurHash(string: "LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        let dc = BlurHash.Base83.decode(Array("HV6n".utf8)[...])
        #expect(hash.averageColor == RGBAColor(red: UInt8(dc >> 16), green: UInt8((dc >> 8) & 255), blue: UInt8(dc & 255)))
        #expect((hash.componentsX, hash.componentsY) == (4, 3))
        #expect(try BlurHash(string: "0~~~~~").averageColor.red == 255, "a value past 24 bits does not trap")
    }

    @Test("malformed hashes are typed errors naming the input, never a crash")
    func malformed() throws {
        for text in [
            "", "LEHV6", "LEHV6nWB2yk8pyo0adR*.7kCMdn", "LEHV6nWB2yk8pyo0adR*.7kCMdnjj", "LEHV6nWB2yk8pyo0adR*.7kCMdn\"",
            "LEHV6nWB2yk8pyo0adR*.7kCMdné"
        ] {
            do {
                _ = try BlurHash(string: text)
                Issue.record("\"\(text)\" was accepted")
            } catch {
                #expect(PlaceholderPixels.isInvalidHash(error, algorithm: "BlurHash"), "\(error)")
                #expect(error.description.contains("BlurHash"))
            }
        }
    }

    @Test("random strings of the alphabet either decode or throw")
    func randomStrings() throws {
        var random = SplitMix64(seed: 7)
        var decoded = 0
        for _ in 0..<1000 {
            let flag = Int.random(in: 0..<83, using: &random)
            let components = (flag % 9 + 1) * (flag / 9 + 1)
            let count = 4 + 2 * components + (Bool.random(using: &random) ? 0 : Int.random(in: -3...3, using: &random))
            let digits = (1..<max(1, count)).map { _ in BlurHash.Base83.alphabet[Int.random(in: 0..<83, using: &random)] }
            let text = String(decoding: [BlurHash.Base83.alphabet[flag]] + digits, as: UTF8.self)
            guard let hash = try? BlurHash(string: text) else { continue }
            #expect(try hash.image(width: 8, height: 6).width == 8)
            decoded += 1
        }
        #expect(decoded > 300)
    }

    @Test("arguments out of range are refused")
    func arguments() throws {
        let raster = [UInt8](repeating: 128, count: 4 * 4 * 4)
        for (x, y) in [(0, 3), (4, 10), (10, 1)] {
            #expect(throws: OspreyError.self) { try BlurHash(rgba: raster, width: 4, height: 4, componentsX: x, componentsY: y) }
        }
        #expect(throws: OspreyError.self) { try BlurHash(rgba: raster, width: 4, height: 5) }
        #expect(throws: OspreyError.self) { try BlurHash(rgba: [UInt8](repeating: 0, count: 101 * 4), width: 101, height: 1) }
        let hash = try BlurHash(rgba: raster, width: 4, height: 4)
        let cases: [(Int, Int, Double)] = [(0, 10, 1), (10, -1, 1), (BlurHash.maxDecodedSide + 1, 10, 1), (10, 10, 0), (10, 10, .nan)]
        for (width, height, punch) in cases {
            do {
                _ = try hash.image(width: width, height: height, punch: punch)
                Issue.record("\(width)x\(height) punch \(punch) was accepted")
            } catch {
                #expect(PlaceholderPixels.isInvalidArgument(error), "\(error)")
            }
        }
    }

    @Test("round trips on the test images stay close to the image downscaled")
    func roundTrips() async throws {
        for name in TestData.allImageNames {
            let data = try TestData.data(name)
            let original = try Image(data: data, options: DecodingOptions(thumbnail: .init(maxPixelSize: 100), firstFrameOnly: true))
            let hash = try await BlurHash.encode(original)
            #expect(hash.string == (try BlurHash(imageData: data)).string, "\(name)")
            #expect(hash.string.count == 4 + 2 * 4 * 3)
            guard !original.hasAlpha else { continue }  // BlurHash reads the colour of transparent pixels too
            let decoded = try hash.image(width: original.width, height: original.height)
            let difference = try PlaceholderPixels.meanDifference(decoded: decoded, original: original)
            #expect(difference < 40, "\(name): mean difference \(difference)")
            let fine = try BlurHash(image: original, componentsX: 9, componentsY: 9).image(width: original.width, height: original.height)
            let fineDifference = try PlaceholderPixels.meanDifference(decoded: fine, original: original)
            #expect(fineDifference <= difference + 0.5, "\(name): 9x9 components (\(fineDifference)) are closer than 4x3 (\(difference))")
        }
    }
}
