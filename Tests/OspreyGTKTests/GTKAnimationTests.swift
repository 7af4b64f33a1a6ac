import CGtk
import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyGTK

/// Animated images on a GTK target (same serialized suite as the other GTK tests).
extension GTKTargetTests {
    /// A 40×30 GIF of two frames, red (220, 20, 20) then blue (20, 40, 220), 300 ms each, made
    /// with libvips (`gifsave` of a two-page image, `loop` 2); 153 bytes.
    static let twoFrameGIF = Data(
        base64Encoded:
            "R0lGODlhKAAeAIAAAEdwTNwUFCH/C05FVFNDQVBFMi4wAwEBAAAh+QQFHgAAACwAAAAAKAAeAAACIYyPqcvtD6OctNqLs968+w+G4kiW5omm6sq27gvH8kxzBQAh+QQFHgAAACwAAAAAKAAeAIBHcEwUKNwCIYyPqcvtD6OctNqLs968+w+G4kiW5omm6sq27gvH8kxzBQA7"
    )!

    /// The same two frames as an animated WebP, made with libvips from ``twoFrameGIF``
    /// (`vips copy two.gif[n=-1] two.webp[lossless]`: lossless, so the colours stay exact; delays
    /// 300 ms, loop 2); 338 bytes.
    static let twoFrameWebP = Data(
        base64Encoded:
            "UklGRkoBAABXRUJQVlA4WAoAAAAKAAAAJwAAHQAAQU5JTQYAAAD/////AgBBTk1GKgAAAAAAAAAAACcAAB0AACwBAAJWUDhMEQAAAC8nQAcAB1CKcpei/4GI6H8AAEFOTUYqAAAAAAAAAAAAJwAAHQAALAEAAFZQOEwRAAAALydABwAHUJRSlLv/gYjofwAARVhJRroAAABFeGlmAABJSSoACAAAAAYAEgEDAAEAAAABAAAAGgEFAAEAAABWAAAAGwEFAAEAAABeAAAAKAEDAAEAAAACAAAAEwIDAAEAAAABAAAAaYcEAAEAAABmAAAAAAAAADhjAADoAwAAOGMAAOgDAAAGAACQBwAEAAAAMDIxMAGRBwAEAAAAAQIDAACgBwAEAAAAMDEwMAGgAwABAAAA//8AAAKgBAABAAAAKAAAAAOgBAABAAAAPAAAAAAAAAA="
    )!

    /// Loads `data` (served at `/gated/<name>`) into a new 80×60 picture with `animation`;
    /// returns the picture and its window once the image is shown.
    private func animatedPicture(
        _ data: Data, name: String, origin: LoopbackOrigin, pipeline: ImagePipeline, animation: AnimationSettings
    ) async throws -> (OspreyPicture, UnsafeMutablePointer<GtkWidget>) {
        origin.setBody(name, data, cut: data.count)
        origin.openGate(name)
        let picture = OspreyPicture()
        picture.animationSettings = animation
        gtk_widget_set_size_request(picture.widget, 80, 60)
        let window = await GTKHarness.window(picture.widget, width: 80, height: 60)
        let results = Results()
        picture.osprey.setImage(
            with: .url(origin.url("/gated/\(name)")), settings: TargetSettings(sizedToTarget: false), pipeline: pipeline,
            completion: { results.all.append($0) })
        #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
        return (picture, window)
    }

    @Test(
        "an animated GIF or WebP plays: frame 1, then frame 2 after its delay on the frame clock, and stops after the loop count",
        arguments: ["gif", "webp"])
    func animationPlays(format: String) async throws {
        let data = format == "gif" ? Self.twoFrameGIF : Self.twoFrameWebP
        try await withOrigin { origin, pipeline in
            let (picture, window) = try await animatedPicture(
                data, name: "anim-\(format)", origin: origin, pipeline: pipeline,
                animation: AnimationSettings(autoplay: false, loopCount: 1))
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let player = try #require(picture.animation)
            // setImage on an OspreyPicture decodes the frames on demand.
            #expect(player.buffer.decoder?.format.rawValue == format && player.buffer.image == nil)
            #expect(player.loopCount == 1 && player.buffer.frameCount == 2)
            #expect(player.buffer.frameDelays == [300, 300])
            #expect(player.currentFrame == 0)
            // Held until frame 1 is on screen: on a loaded machine the first draw can come later
            // than frame 1's delay, and a playing animation skips a late frame by time.
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (220, 20, 20), tolerance: 6))
            player.play()
            #expect(await GTKHarness.pump("frame 1 to play") { player.currentFrame == 1 })
            let start = try #require(player.startTime)
            let changed = try #require(player.lastChangeTime)
            #expect(changed - start >= 300_000, "frame 2 came \(changed - start) µs of frame-clock time after frame 1, its delay is 300 ms")
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (20, 40, 220), tolerance: 6))
            // One loop: after frame 2's delay it stops on frame 2.
            #expect(await GTKHarness.pump("the animation to finish") { player.isFinished })
            #expect(player.completedLoops == 1 && player.currentFrame == 1 && !player.isPlaying)
            await GTKHarness.pumpFrames(3, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (20, 40, 220), tolerance: 6))
        }
    }

    @Test("the image's own loop count is honoured; pause holds the frame; onlyLoadFirstFrame does not animate")
    func loopCountAndPause() async throws {
        try await withOrigin { origin, pipeline in
            let decoded = try Image(data: Self.twoFrameGIF)
            #expect(decoded.loopCount > 0)
            let (picture, window) = try await animatedPicture(
                Self.twoFrameGIF, name: "loops", origin: origin, pipeline: pipeline, animation: AnimationSettings())
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let player = try #require(picture.animation)
            #expect(player.loopCount == decoded.loopCount)
            #expect(await GTKHarness.pump("the animation to finish") { player.isFinished })
            #expect(player.completedLoops == decoded.loopCount && player.currentFrame == 1)

            player.play()
            #expect(player.isPlaying && player.currentFrame == 0)
            player.pause()
            await GTKHarness.pumpFrames(30, of: window)
            #expect(player.currentFrame == 0 && !player.isPlaying)
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (220, 20, 20), tolerance: 6))

            // Its own URL: the memory cache holds the animated image of the first.
            origin.setBody("still", Self.twoFrameGIF, cut: Self.twoFrameGIF.count)
            origin.openGate("still")
            let still = OspreyPicture()
            let results = Results()
            still.osprey.setImage(
                with: .url(origin.url("/gated/still")), options: [.onlyLoadFirstFrame], pipeline: pipeline,
                completion: { results.all.append($0) })
            #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
            #expect(still.texture != nil && still.animation == nil)
        }
    }

    @Test("a long GIF plays through a bounded buffer: never more frames held than it allows")
    func boundedBuffer() async throws {
        try await withOrigin { origin, pipeline in
            let data = try FixtureImages.data("iss634.gif")
            let (picture, window) = try await animatedPicture(
                data, name: "iss", origin: origin, pipeline: pipeline, animation: AnimationSettings(maxBufferedFrames: 3))
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let player = try #require(picture.animation)
            let frames = player.buffer.frameCount
            #expect(frames > 3)
            #expect(player.buffer.capacity == 3)
            // Play through more frames than the buffer holds.
            #expect(await GTKHarness.pump("frame 5 or a whole loop") { player.currentFrame >= 5 || player.completedLoops > 0 })
            #expect(player.buffer.peakCount <= 3 && player.buffer.count <= 3)
            #expect(player.buffer.madeCount > 3, "frames were made as playback went on, not all at once")
            // A byte budget of two frames holds two.
            let frameBytes = player.buffer.width * player.buffer.height * 4
            #expect(
                AnimationSettings(maxBufferBytes: 2 * frameBytes).bufferCapacity(
                    frameCount: frames, width: player.buffer.width, height: player.buffer.height) == 2)
        }
    }

    @Test(
        "frames decoded on demand: the decoded frames in memory stay within the buffer plus the few GTK and the worker hold",
        arguments: ["gif", "webp"])
    func decodedOnDemand(format: String) async throws {
        try GTKHarness.start()
        let gif = try FixtureImages.data("iss634.gif")
        let data = format == "gif" ? gif : try Image(data: gif).encoded(as: .webp, quality: 80)
        let decoder = try AnimationFrameDecoder(data: data)
        #expect(decoder.frameCount == 42)
        let picture = OspreyPicture()
        picture.animationSettings = AnimationSettings(maxBufferedFrames: 3)
        gtk_widget_set_size_request(picture.widget, 80, 60)
        let window = await GTKHarness.window(picture.widget, width: 80, height: 60)
        defer { gtk_window_destroy(GtkWindowPointer(window)) }
        picture.display(try #require(Texture(decoding: decoder)))
        let player = try #require(picture.animation)
        #expect(player.buffer.decoder === decoder && player.buffer.image == nil && player.buffer.capacity == 3)
        // A whole loop and a few frames of the next: every frame decoded as playback reached it.
        var most = 0
        let played = await GTKHarness.pump("a whole loop and 5 frames") {
            most = max(most, decoder.framesInMemory)
            return player.completedLoops >= 1 && player.currentFrame >= 5
        }
        #expect(played)
        #expect(player.buffer.peakCount <= 3)
        // Besides the buffer's 3: the picture's first frame, the frame GTK's last render holds
        // until the next, and one the worker was making when the window moved past it.
        #expect(most <= 3 + 3, "\(most) decoded frames were in memory at once, of 42")
        #expect(decoder.decodedCount > 42, "the first frames were decoded again in the second loop (\(decoder.decodedCount) decodes)")
    }
}

/// An animation as a `GdkPaintable` in a plain `GtkPicture`.
extension GTKTargetTests {
    @Test("an animation is a GdkPaintable a plain GtkPicture plays: frame 1, then frame 2; finalised with its picture")
    func animatedPaintable() async throws {
        try GTKHarness.start()
        let image = try Image(data: Self.twoFrameGIF)
        let texture = try #require(Texture(image: image))
        let paintable = try #require(texture.makeAnimatedPaintable(settings: AnimationSettings(loopCount: 1)))
        #expect(Texture(image: try Self.red()).flatMap { $0.makeAnimatedPaintable() } == nil, "a still image is no animation")
        let picture = gtk_picture_new_for_paintable(paintable)!
        gtk_widget_set_size_request(picture, 80, 60)
        let finalised = UnsafeMutablePointer<gpointer?>.allocate(capacity: 1)
        defer { finalised.deallocate() }
        finalised.pointee = UnsafeMutableRawPointer(paintable)
        g_object_add_weak_pointer(GObjectPointer(paintable), finalised)
        g_object_unref(UnsafeMutableRawPointer(paintable))  // the picture holds it now
        let window = await GTKHarness.window(picture, width: 80, height: 60)
        #expect(await GTKHarness.pump("frame 1 (red) on screen") { GTKHarness.close(GTKHarness.centrePixel(of: picture, in: window), (220, 20, 20)) })
        #expect(
            await GTKHarness.pump("frame 2 (blue) on screen") { GTKHarness.close(GTKHarness.centrePixel(of: picture, in: window), (20, 40, 220)) })
        gtk_window_destroy(GtkWindowPointer(window))
        #expect(await GTKHarness.pump("the paintable to be finalised with its picture") { finalised.pointee == nil })
    }

    /// `G_OBJECT(pointer)` for an opaque GObject pointer.
    private func GObjectPointer(_ pointer: OpaquePointer) -> UnsafeMutablePointer<GObject> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GObject.self)
    }
}
