import Foundation
import Testing

@testable import Osprey

@Suite("Animation frames decoded on demand", .timeLimit(.minutes(5)))
struct AnimationFrameDecoderTests {
    /// iss634.gif (42 frames) and the same animation as a WebP made with Osprey's encoder.
    static func animations() throws -> [(String, Data)] {
        let gif = try TestData.data("iss634.gif")
        return [("gif", gif), ("webp", try Image(data: gif).encoded(as: .webp, quality: 80))]
    }

    @Test("each frame, asked for in order, skipped to, or after starting over, is the whole decode's frame")
    func framesMatchTheWholeDecode() throws {
        for (name, data) in try Self.animations() {
            let whole = try Image(data: data)
            let decoder = try AnimationFrameDecoder(data: data)
            #expect(decoder.frameCount == whole.frameCount && decoder.frameCount == 42, "\(name)")
            #expect(decoder.frameDelays == whole.frameDelays && decoder.loopCount == whole.loopCount, "\(name)")
            #expect((decoder.width, decoder.height) == (whole.width, whole.height), "\(name)")
            // In order, a skip ahead, the loop starting over, a jump back.
            for index in [0, 1, 2, 7, 41, 0, 1, 20, 3] {
                let frame = try decoder.frame(at: index)
                let expected = try #require(whole.frame(at: index))
                #expect(frame.frameCount == 1 && (frame.width, frame.height) == (whole.width, whole.height))
                #expect(try frame.rgbaPixels() == expected.rgbaPixels(), "\(name) frame \(index)")
            }
            #expect(decoder.decodedCount == 9)
        }
    }

    @Test("framesInMemory counts the frames still held, exactly")
    func framesInMemory() throws {
        let decoder = try AnimationFrameDecoder(data: TestData.data("iss634.gif"))
        #expect(decoder.framesInMemory == 0)
        var held = try (0..<3).map { try decoder.frame(at: $0) }
        #expect(decoder.framesInMemory == 3)
        held.removeFirst(2)
        #expect(decoder.framesInMemory == 1)
        for index in 3..<42 { _ = try decoder.frame(at: index) }
        #expect(decoder.framesInMemory == 1)
        held.removeAll()
        #expect(decoder.framesInMemory == 0)
    }

    @Test("bad input gets a typed error: a still format, damaged bytes, a frame out of range, a frame cut short")
    func badInput() throws {
        #expect(throws: OspreyError.decoding(.noDecoder(format: .png))) { try AnimationFrameDecoder(data: TestData.data("hopper.png")) }
        #expect(throws: OspreyError.decoding(.emptyData)) { try AnimationFrameDecoder(data: Data()) }
        let gif = try TestData.data("iss634.gif")
        #expect(throws: OspreyError.self) { try AnimationFrameDecoder(data: gif.prefix(gif.count / 2)) }
        let decoder = try AnimationFrameDecoder(data: gif)
        #expect(throws: OspreyError.self) { try decoder.frame(at: 42) }
        #expect(throws: OspreyError.self) { try decoder.frame(at: -1) }
        // A WebP whose last frames are cut off: the header reads, the missing frames throw.
        let webp = try Image(data: gif).encoded(as: .webp, quality: 80)
        let cut = webp.prefix(webp.count * 3 / 4)
        if let damaged = try? AnimationFrameDecoder(data: cut) {
            var failures = 0
            for index in 0..<damaged.frameCount {
                do { _ = try damaged.frame(at: index) } catch { failures += 1 }
            }
            #expect(failures > 0)
        }
        // Too large for the limit, summed over the frames.
        #expect(throws: OspreyError.decoding(.tooLarge(width: 245, height: 245, frames: 42, limitPixels: 1000))) {
            try AnimationFrameDecoder(data: gif, options: DecodingOptions(maxSourcePixels: 1000))
        }
    }
}
