import CGtk
import Foundation
import Osprey
import OspreyGTK
import OspreyTestSupport
import Testing

/// Low resolution first: a detail view shows the small decoded variant already in memory at once,
/// scaled to the widget, then the sharp image (Coil's placeholder key, Glide's `thumbnail()`).
@Suite("GTK low resolution first", .serialized, .timeLimit(.minutes(5)))
@MainActor
struct GTKLowResolutionTests {
    /// The colour of the 400×300 image the origin serves.
    static let colour: (red: UInt8, green: UInt8, blue: UInt8) = (40, 160, 90)

    /// Serves `/gated/<name>` as a 400×300 PNG of ``colour`` (gate open).
    static func serveLarge(_ origin: LoopbackOrigin, _ name: String) throws -> URL {
        let pixels = (0..<(400 * 300)).flatMap { _ -> [UInt8] in [colour.red, colour.green, colour.blue, 255] }
        origin.setBody(name, try Image(rgba: pixels, width: 400, height: 300).encoded(as: .png), cut: 0)
        origin.openGate(name)
        return origin.url("/gated/\(name)")
    }

    @Test("the grid's 40-pixel image is on a 200-pixel detail view in the setImage turn, then the sharp one, never empty between")
    func smallFirstThenSharp() async throws {
        try await GTKHarness.withOrigin("low-res-test") { origin, pipeline in
            let url = try Self.serveLarge(origin, "detail.png")
            let thumbnail = OspreyPicture()
            gtk_widget_set_size_request(thumbnail.widget, 40, 30)
            thumbnail.osprey.setImage(with: url, pipeline: pipeline)
            await GTKHarness.pump("the thumbnail") { thumbnail.texture != nil }
            #expect(thumbnail.texture?.width == 40)

            let detail = OspreyPicture()
            gtk_widget_set_size_request(detail.widget, 200, 150)
            let window = await GTKHarness.window(detail.widget, width: 200, height: 150)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            detail.osprey.setImage(with: url, pipeline: pipeline)
            // The same turn: the small image is the detail's content already.
            let first = try #require(detail.texture, "a texture before setImage returned")
            #expect(first.width == 40 && gtk_picture_get_paintable(OpaquePointer(detail.picture)) == first.paintable)
            var emptied = false
            let scale = Int(gtk_widget_get_scale_factor(detail.widget))
            await GTKHarness.pump("the sharp image") {
                if detail.texture == nil { emptied = true }
                return detail.texture?.width == 200 * scale
            }
            #expect(!emptied, "the small image is replaced, never removed first")
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: detail.widget, in: window), Self.colour))
            #expect(origin.hits("/gated/detail.png") == 1)
        }
    }

    @Test("turned off, the detail view waits with its placeholder; a named memory key shows that image even for another source")
    func offAndNamedKey() async throws {
        try await GTKHarness.withOrigin("low-res-off-test") { origin, pipeline in
            let url = try Self.serveLarge(origin, "named.png")
            let small: [RequestOption] = [.processor(.downsample(width: 40, height: 30))]
            _ = try await pipeline.image(for: url, options: small)
            let thumbnail = OspreyPicture()
            gtk_widget_set_size_request(thumbnail.widget, 40, 30)
            thumbnail.osprey.setImage(with: url, pipeline: pipeline)
            await GTKHarness.pump("the thumbnail") { thumbnail.texture != nil }

            let off = OspreyPicture()
            gtk_widget_set_size_request(off.widget, 200, 150)
            off.osprey.setImage(with: url, settings: TargetSettings(showsCachedVariantFirst: false), pipeline: pipeline)
            #expect(off.texture == nil, "no variant shown when turned off")

            let named = OspreyPicture()
            gtk_widget_set_size_request(named.widget, 200, 150)
            let window = await GTKHarness.window(named.widget, width: 200, height: 150)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let key = pipeline.memoryCacheKey(for: .url(url), options: small)
            named.osprey.setImage(with: origin.itemURL(5), settings: TargetSettings(placeholderMemoryKey: key), pipeline: pipeline)
            #expect(named.texture?.width == 40, "the named image at once")
            await GTKHarness.pump("the item's own image") { !named.osprey.isLoading }
            await GTKHarness.pumpFrames(1, of: window)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: named.widget, in: window), ColorImages.color(5)))
            await GTKHarness.pump("the off picture's image") { off.texture != nil }
        }
    }
}
