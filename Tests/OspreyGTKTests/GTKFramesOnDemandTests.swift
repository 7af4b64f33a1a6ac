import CGtk
import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyGTK

/// `setImage` of an animation on an `OspreyPicture`: frames decoded on demand through the
/// pipeline (same serialized suite as the other GTK tests).
extension GTKTargetTests {
    /// A pixel where frames 0 and 1 of `decoder`'s animation differ most, opaque in both, with
    /// its colour in each.
    static func telltale(_ decoder: AnimationFrameDecoder) throws -> (x: Int, y: Int, first: RGB, second: RGB) {
        let (a, b) = try (decoder.frame(at: 0).rgbaPixels(), decoder.frame(at: 1).rgbaPixels())
        let width = decoder.width
        func rgb(_ p: [UInt8], _ x: Int, _ y: Int) -> RGB {
            let o = (y * width + x) * 4
            return (p[o], p[o + 1], p[o + 2])
        }
        func distance(_ c: RGB, _ d: RGB) -> Int {
            abs(Int(c.red) - Int(d.red)) + abs(Int(c.green) - Int(d.green)) + abs(Int(c.blue) - Int(d.blue))
        }
        var best: (x: Int, y: Int, first: RGB, second: RGB, score: Int)?
        for y in 2..<(decoder.height - 2) {
            for x in 2..<(width - 2) {
                let score = distance(rgb(a, x, y), rgb(b, x, y))
                guard score > (best?.score ?? 24), a[(y * width + x) * 4 + 3] == 255, b[(y * width + x) * 4 + 3] == 255 else { continue }
                best = (x, y, rgb(a, x, y), rgb(b, x, y), score)
            }
        }
        guard let best else { throw HarnessError(message: "frames 0 and 1 have no flat pixel that differs") }
        return (best.x, best.y, best.first, best.second)
    }

    typealias RGB = (red: UInt8, green: UInt8, blue: UInt8)

    @Test("setImage of iss634.gif plays frames decoded on demand: frame 1 then frame 2 on screen, the frames held within the buffer")
    func setImagePlaysFramesOnDemand() async throws {
        try await withOrigin { origin, pipeline in
            let data = try FixtureImages.data("iss634.gif")
            let mark = try Self.telltale(AnimationFrameDecoder(data: data))
            origin.setBody("iss-demand", data, cut: data.count)
            origin.openGate("iss-demand")
            let picture = OspreyPicture()
            picture.animationSettings = AnimationSettings(autoplay: false, maxBufferedFrames: 3)
            // 245×245, the GIF's size: drawn one to one, so the telltale pixel is where it was.
            gtk_widget_set_size_request(picture.widget, 245, 245)
            let window = await GTKHarness.window(picture.widget, width: 245, height: 245)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let url = origin.url("/gated/iss-demand")
            let results = Results()
            // Default settings: sized to the widget (a 245×245 downsample, which keeps frames on demand).
            picture.osprey.setImage(with: .url(url), pipeline: pipeline, completion: { results.all.append($0) })
            #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
            let result = try #require(results.all.first).get()
            let decoder = try #require(result.frameDecoder, "the pipeline delivered a frame decoder")
            #expect(result.image.frameCount == 1 && decoder.frameCount == 42)
            let player = try #require(picture.animation)
            #expect(player.buffer.decoder === decoder && player.buffer.image == nil && player.buffer.capacity == 3)

            // Frame 1 on screen.
            let bounds = try #require(WidgetSnapshot.bounds(of: picture.picture, in: window))
            let (x, y) = (Int(bounds.x) + mark.x, Int(bounds.y) + mark.y)
            await GTKHarness.pumpFrames(1, of: window)
            let shownFirst = GTKHarness.pixel(of: window, x: x, y: y)
            #expect(GTKHarness.close(shownFirst, mark.first, tolerance: 8), "frame 1 at (\(x), \(y)): \(String(describing: shownFirst))")

            // Frame 2 once frame 1's delay passed (held there: paused as soon as it is current).
            #expect(await GTKHarness.pump("frame 1 in the frame buffer") { player.buffer.texture(at: 1) != nil })
            player.play()
            #expect(
                await GTKHarness.pump("frame 1 to play") {
                    if player.currentFrame >= 1 { player.pause() }
                    return player.currentFrame >= 1
                })
            #expect(player.currentFrame == 1 && player.skippedFrames == 0)
            await GTKHarness.pumpFrames(1, of: window)
            let shownSecond = GTKHarness.pixel(of: window, x: x, y: y)
            #expect(GTKHarness.close(shownSecond, mark.second, tolerance: 8), "frame 2 at (\(x), \(y)): \(String(describing: shownSecond))")

            // A loop and a bit: the decoded frames alive stay within the buffer's 3 plus the
            // picture's first frame, the one GTK's last render holds and one the worker makes.
            var most = decoder.framesInMemory
            player.play()
            let played = await GTKHarness.pump("a whole loop and 5 frames") {
                most = max(most, decoder.framesInMemory)
                return player.completedLoops >= 1 && player.currentFrame >= 5
            }
            #expect(played)
            #expect(player.buffer.peakCount <= 3 && player.buffer.count <= 3)
            #expect(most <= 3 + 3, "\(most) decoded frames were in memory at once, of 42")

            // The first frame was not cached as the image: a plain request gets all 42 frames.
            let downsample = ImageProcessors.Downsample(width: 245, height: 245)
            #expect(pipeline.cachedImage(for: .url(url), options: [.processor(downsample)]) == nil)
            let plain = try await pipeline.image(for: url)
            #expect(plain.frameDecoder == nil && plain.image.frameCount == 42)
        }
    }

    @Test("setImage of damaged GIF bytes completes with a typed decoding error and plays nothing")
    func setImageDamagedAnimation() async throws {
        try await withOrigin { origin, pipeline in
            let gif = try FixtureImages.data("iss634.gif")
            let picture = OspreyPicture()
            for (name, body) in [("garbage", Data("GIF89a".utf8) + Data(repeating: 0xA5, count: 64)), ("cut", gif.prefix(gif.count / 2))] {
                origin.setBody(name, body, cut: body.count)
                origin.openGate(name)
                let results = Results()
                picture.osprey.setImage(with: .url(origin.url("/gated/\(name)")), pipeline: pipeline, completion: { results.all.append($0) })
                #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
                guard case .failure(.decoding) = try #require(results.all.first) else {
                    Issue.record("\(name): \(String(describing: results.all.first)) is not a decoding error")
                    continue
                }
                #expect(picture.animation == nil && picture.texture == nil)
            }
        }
    }
}
