import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("ThumbHash", .timeLimit(.minutes(5)))
struct ThumbHashTests {
    @Test("the encoder writes the reference's bytes (JS reference and PyPI thumbhash) for the same RGBA raster")
    func encoderMatchesReferences() throws {
        #expect(PlaceholderVectors.thumbHashes.count == PlaceholderVectors.rasters.count)
        for vector in PlaceholderVectors.thumbHashes {
            let raster = try #require(PlaceholderVectors.rasters[vector.raster])
            let hash = try ThumbHash(rgba: raster.rgba, width: raster.width, height: raster.height)
            #expect(hash.bytes == vector.jsHash, "\(vector.raster)")
            if let pypi = vector.pypiHash { #expect(hash.bytes == pypi, "\(vector.raster)") }
        }
        #expect(PlaceholderVectors.thumbHashes.contains { $0.jsHash[2] & 0x80 != 0 }, "an alpha raster is among the vectors")
    }

    @Test("hashes made by the JS reference decode to its pixels")
    func decoderMatchesReference() throws {
        for vector in PlaceholderVectors.thumbHashes {
            let hash = try ThumbHash(bytes: vector.jsHash)
            let decoded = hash.decodeRGBA()
            #expect(decoded.width == vector.jsDecodedWidth && decoded.height == vector.jsDecodedHeight, "\(vector.raster)")
            let expected = PlaceholderVectors.bytes(vector.jsDecodedBase64)
            #expect(decoded.rgba.count == expected.count, "\(vector.raster)")
            // Both compute in doubles in the same order; a last-bit difference between two libm
            // cosines could move a value across a byte boundary, hence 1 and not 0.
            #expect(PlaceholderPixels.maxDifference(decoded.rgba, expected) <= 1, "\(vector.raster)")
            let image = try hash.image()
            #expect((image.width, image.height) == (vector.jsDecodedWidth, vector.jsDecodedHeight))
            #expect(try image.rgbaPixels() == decoded.rgba)
        }
    }

    @Test("average colour and aspect ratio are the reference helpers'")
    func helpersMatchReference() throws {
        for vector in PlaceholderVectors.thumbHashes {
            let hash = try ThumbHash(bytes: vector.jsHash)
            let (r, g, b, a) = hash.averageRGBA
            let expected = try #require(vector.pypiAverage)
            for (ours, theirs) in zip([r, g, b, a], expected) { #expect(abs(ours - theirs) < 1e-12, "\(vector.raster)") }
            #expect(hash.averageColor.red == UInt8((r * 255).rounded()))
            #expect(hash.approximateAspectRatio == vector.pypiAspect, "\(vector.raster)")
            #expect(hash.hasAlpha == (vector.raster.contains("alpha")))
        }
    }

    @Test("the string form is standard base64 and reads back, URL-safe and unpadded too")
    func stringForm() throws {
        let vector = try #require(PlaceholderVectors.thumbHashes.first)
        let hash = try ThumbHash(bytes: vector.jsHash)
        #expect(hash.string == Data(vector.jsHash).base64EncodedString())
        #expect(try ThumbHash(string: hash.string) == hash)
        #expect(hash.description == hash.string)
        let urlSafe = hash.string.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(try ThumbHash(string: " \(urlSafe)\n") == hash)
    }

    @Test("malformed hashes are typed errors naming the input, never a crash")
    func malformed() throws {
        let valid = try ThumbHash(bytes: PlaceholderVectors.thumbHashes[0].jsHash)
        let zeroAspect = Data([valid.bytes[0], valid.bytes[1], valid.bytes[2], valid.bytes[3] & ~7, valid.bytes[4]] + valid.bytes.dropFirst(5))
        for text in ["", "   ", "!!!!", "AAAA", "AAAAAAA=", Data(valid.bytes.dropLast()).base64EncodedString(), zeroAspect.base64EncodedString()] {
            do {
                _ = try ThumbHash(string: text)
                Issue.record("\"\(text)\" was accepted")
            } catch {
                #expect(PlaceholderPixels.isInvalidHash(error, algorithm: "ThumbHash"), "\(error)")
                #expect(error.description.contains("ThumbHash"))
            }
        }
        let long = String(repeating: "%", count: 5000)
        #expect(throws: OspreyError.self) { try ThumbHash(string: long) }
        do {
            _ = try ThumbHash(string: long)
        } catch {
            #expect(error.description.count < 300, "the reason quotes only the start of a long input")
        }
    }

    @Test("random bytes either decode or throw, and decode within 32 x 32")
    func randomBytes() throws {
        var random = SplitMix64(seed: 42)
        var decoded = 0
        for _ in 0..<2000 {
            let count = Int.random(in: 0...32, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            guard let hash = try? ThumbHash(bytes: bytes) else { continue }
            let image = try hash.image()
            #expect(image.width <= 32 && image.height <= 32 && image.width > 0 && image.height > 0)
            decoded += 1
        }
        #expect(decoded > 100)
    }

    @Test("rasters larger than 100 x 100 or of the wrong byte count are refused; images are downsampled")
    func inputSize() async throws {
        #expect(throws: OspreyError.self) { try ThumbHash(rgba: [UInt8](repeating: 0, count: 101 * 10 * 4), width: 101, height: 10) }
        #expect(throws: OspreyError.self) { try ThumbHash(rgba: [0, 0, 0], width: 1, height: 1) }
        let image = try TestData.image("retina.jpg")
        #expect(image.width > 100)
        let synchronous = try ThumbHash(image: image)
        let asynchronous = try await ThumbHash.encode(image)
        #expect(synchronous == asynchronous)
        #expect(abs(synchronous.approximateAspectRatio - 1) < 0.01)
    }

    @Test("round trips on the test images stay close to the image downscaled")
    func roundTrips() throws {
        for name in TestData.allImageNames {
            let data = try TestData.data(name)
            let hash = try ThumbHash(imageData: data)
            let decoded = try hash.image()
            #expect(max(decoded.width, decoded.height) == ThumbHash.decodedMaxSide, "\(name)")
            let original = try Image(data: data, options: DecodingOptions(thumbnail: .init(maxPixelSize: 100), firstFrameOnly: true))
            let ratio = Double(original.width) / Double(original.height)
            #expect(abs(log(hash.approximateAspectRatio / ratio)) < 0.4, "\(name): aspect \(hash.approximateAspectRatio) vs \(ratio)")
            let difference = try PlaceholderPixels.meanDifference(decoded: decoded, original: original)
            #expect(difference < 30, "\(name): mean difference \(difference)")
            #expect(try ThumbHash(image: original) == hash, "\(name): from bytes or from the decoded image alike")
        }
    }
}
