import CGtk
import Foundation
import Osprey
import OspreyGTK
import OspreyTestSupport
import Testing

/// GTK targets on a real (Xvfb) display, asserting on the pixels the widgets draw.
@Suite("GTK targets", .serialized, .timeLimit(.minutes(10)))
@MainActor
struct GTKTargetTests {
    /// A pipeline over a fresh cache directory and a colour origin, torn down afterwards.
    func withOrigin(_ body: (LoopbackOrigin, ImagePipeline) async throws -> Void) async throws {
        try await GTKHarness.withOrigin("gtk-test", body)
    }

    @Test("a memory hit is on screen in the same main-loop turn as setImage")
    func memoryHitSameTurn() async throws {
        try await withOrigin { origin, pipeline in
            _ = try await pipeline.image(for: origin.itemURL(3))  // now in the memory cache
            let picture = OspreyPicture()
            gtk_widget_set_size_request(picture.widget, 80, 60)
            let window = await GTKHarness.window(picture.widget, width: 80, height: 60)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let settings = TargetSettings<OspreyPicture>(sizedToTarget: false)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (255, 255, 255), tolerance: 255))
            let task = picture.osprey.setImage(with: .url(origin.itemURL(3)), settings: settings, pipeline: pipeline)
            // Before any main-loop iteration or main-actor job: the texture is the picture's
            // paintable already, and the request is over, so the next frame draws the image.
            let shown = try #require(picture.texture)
            #expect(gtk_picture_get_paintable(OpaquePointer(picture.picture)) == shown.paintable)
            #expect(task?.isCompleted == true && !picture.osprey.isLoading)
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), ColorImages.color(3)))
        }
    }

    /// An 80×60 ``OspreyPicture`` alone in a window of its size.
    static func pictureInWindow() async -> (OspreyPicture, UnsafeMutablePointer<GtkWidget>) {
        let picture = OspreyPicture()
        gtk_widget_set_size_request(picture.widget, 80, 60)
        return (picture, await GTKHarness.window(picture.widget, width: 80, height: 60))
    }

    /// An 8×6 image of one red, (220, 20, 20).
    static func red() throws -> Image {
        try Image(rgba: (0..<(8 * 6)).flatMap { _ -> [UInt8] in [220, 20, 20, 255] }, width: 8, height: 6)
    }

    @Test("a failed load shows the failure image; the spinner shows while loading")
    func failureImage() async throws {
        try await withOrigin { origin, pipeline in
            let (picture, window) = await Self.pictureInWindow()
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let red = try Self.red()
            let settings = TargetSettings<OspreyPicture>(failureImage: red, indicator: OspreyPicture.spinner)
            picture.osprey.setImage(with: .url(origin.url("/missing.png")), settings: settings, pipeline: pipeline)
            #expect(picture.osprey.isLoading)
            #expect(await GTKHarness.pump("the picture to finish loading") { !picture.osprey.isLoading })
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), (220, 20, 20)))
        }
    }

    @Test("the spinner is drawn over the placeholder while a load runs, and gone once it is cancelled")
    func spinnerDrawn() async throws {
        try await withOrigin { origin, pipeline in
            let (picture, window) = await Self.pictureInWindow()
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let red = try Self.red()
            let settings = TargetSettings<OspreyPicture>(indicator: OspreyPicture.spinner)
            picture.osprey.setImage(with: .url(origin.url("/delay/5000/spinner")), placeholder: red, settings: settings, pipeline: pipeline)
            // The request reached the origin: no connection is still being made when the origin stops.
            #expect(await GTKHarness.pump("the origin to be asked for /delay/5000/spinner") { origin.hitsByPath["/delay/5000/spinner"] == 1 })
            await GTKHarness.pumpFrames(3, of: window)
            // The spinner's ring (radius 10, centred) crosses the placeholder's red; its middle does not.
            let ring = GTKHarness.pixel(of: window, x: 50, y: 30)
            #expect(ring != nil && !GTKHarness.close(ring, (220, 20, 20), tolerance: 8), "ring pixel \(String(describing: ring))")
            #expect(GTKHarness.close(GTKHarness.pixel(of: window, x: 40, y: 30), (220, 20, 20)))
            picture.osprey.cancelDownloadTask()
            await GTKHarness.pumpFrames(2, of: window)
            #expect(GTKHarness.close(GTKHarness.pixel(of: window, x: 50, y: 30), (220, 20, 20)))
        }
    }

    @Test("a released widget's load is cancelled")
    func releasedWidgetCancels() async throws {
        try await withOrigin { origin, pipeline in
            let picture = OspreyPicture()
            g_object_ref_sink(UnsafeMutableRawPointer(picture.widget))
            let task = try #require(picture.osprey.setImage(with: .url(origin.url("/delay/5000/released")), pipeline: pipeline))
            // Released while the origin holds the request, not while the client still connects: a
            // connection accepted as the origin stops trips a precondition in swift-nio's
            // NIOAsyncWriter (seen twice in full runs).
            #expect(await GTKHarness.pump("the origin to be asked for /delay/5000/released") { origin.hitsByPath["/delay/5000/released"] == 1 })
            #expect(!task.isCancelled)
            g_object_unref(UnsafeMutableRawPointer(picture.widget))
            #expect(task.isCancelled, "finalising the widget cancelled its load")
            #expect(!picture.isAlive)
        }
    }

    @Test("after fast scrolling over hundreds of items every visible cell shows its own image; back and forth over 500 items downloads each URL once")
    func recycledCells() async throws {
        try await withOrigin { origin, pipeline in
            let count = 500
            let grid = ImageGrid(
                urls: (0..<count).map(origin.itemURL), cellWidth: 100, cellHeight: 75, pipeline: pipeline,
                settings: TargetSettings(indicator: OspreyPicture.spinner))
            let window = await GTKHarness.window(grid.widget, width: 400, height: 300)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            // Fast: one frame per position, down through the list and back up, twice.
            let positions = Array(stride(from: 0, to: count, by: 12)) + Array(stride(from: count - 1, through: 0, by: -16))
            for _ in 0..<2 {
                for item in positions {
                    grid.scroll(toItem: item)
                    await GTKHarness.pumpFrames(1, of: window)
                }
            }
            for stop in [237, 0, 481] {
                grid.scroll(toItem: stop)
                await GTKHarness.pumpFrames(2, of: window)
                #expect(await GTKHarness.pump("the grid to go idle") { grid.isIdle })
                await GTKHarness.pumpFrames(20, of: window)  // past the fade
                try checkCells(grid, window: window)
            }
            // Each URL was requested at most once, however often its row came and went.
            let repeated = origin.hitsByPath.filter { $0.value > 1 }
            #expect(repeated.isEmpty, "downloaded more than once: \(repeated.sorted { $0.key < $1.key }.prefix(10))")
            #expect(origin.hitsByPath.count > 100)
        }
    }

    /// Every cell fully inside the viewport shows its item's colour at its centre.
    private func checkCells(_ grid: ImageGrid, window: UnsafeMutablePointer<GtkWidget>) throws {
        let texture = try #require(WidgetSnapshot.texture(of: window))
        let rgba = WidgetSnapshot.rgba(of: texture)
        let viewport = try #require(WidgetSnapshot.bounds(of: grid.widget, in: window))
        var checked = 0
        for (item, picture) in grid.visibleCells {
            guard let cell = WidgetSnapshot.bounds(of: picture.widget, in: window), cell.y >= viewport.y,
                cell.y + cell.height <= viewport.y + viewport.height
            else { continue }
            let x = Int(cell.x + cell.width / 2)
            let y = Int(cell.y + cell.height / 2)
            let offset = (y * texture.width + x) * 4
            let pixel = (Int(rgba[offset]), Int(rgba[offset + 1]), Int(rgba[offset + 2]))
            #expect(GTKHarness.close(pixel, ColorImages.color(item)), "cell of item \(item) shows \(pixel), expected \(ColorImages.color(item))")
            checked += 1
        }
        #expect(checked >= 8, "at least two rows of cells were checked (\(checked))")
    }
}
