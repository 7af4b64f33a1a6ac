import CGtk
import Foundation
import Osprey
import OspreyGTK
import Testing

/// Progressive previews and hash placeholders on a GTK target (same serialized suite as the other
/// GTK tests: one display, one main loop).
extension GTKTargetTests {
    /// A `width`×`height` image of one colour.
    static func solid(_ color: (UInt8, UInt8, UInt8), width: Int = 64, height: Int = 48) throws -> Image {
        try Image(rgba: (0..<(width * height)).flatMap { _ -> [UInt8] in [color.0, color.1, color.2, 255] }, width: width, height: height)
    }

    /// The offset two bytes past the `index`-th (from 0) SOS marker (`FF DA`) of a JPEG: the
    /// previous scan is complete there and the preview scanner has seen the marker that ends it.
    static func sosCut(_ data: Data, index: Int) -> Int? {
        let bytes = [UInt8](data)
        var found = 0
        for offset in 0..<(bytes.count - 1) where bytes[offset] == 0xFF && bytes[offset + 1] == 0xDA {
            if found == index { return offset + 2 }
            found += 1
        }
        return nil
    }

    @Test("a progressive JPEG: a preview is on screen while the rest downloads, then the final image")
    func previewOnScreen() async throws {
        try await withOrigin { origin, pipeline in
            let color: (UInt8, UInt8, UInt8) = (200, 40, 90)
            let data = try ImageEncoder(format: .jpeg, quality: 90, interlace: true).encode(Self.solid(color, width: 320, height: 240))
            let cut = try #require(Self.sosCut(data, index: 2))
            origin.setBody("prog", data, cut: cut)
            let picture = OspreyPicture()
            gtk_widget_set_size_request(picture.widget, 80, 60)
            let window = await GTKHarness.window(picture.widget, width: 80, height: 60)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let results = Results()
            let options: [RequestOption] = [.progressiveJPEG(ProgressiveJPEG(interval: 0, limitsDecodeCost: false))]
            picture.osprey.setImage(
                with: .url(origin.url("/gated/prog")), options: options, pipeline: pipeline,
                completion: { results.all.append($0) })
            // The first scans arrived; the rest waits on the gate, so what is shown is a preview.
            #expect(await GTKHarness.pump("the picture's first texture") { picture.texture != nil })
            await GTKHarness.pumpFrames(1, of: window)
            #expect(picture.osprey.isLoading && results.all.isEmpty)
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), color, tolerance: 8))
            let preview = try #require(picture.texture)
            origin.openGate("prog")
            #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
            await GTKHarness.pumpFrames(1, of: window)
            #expect(results.all.count == 1 && (try? results.all.first?.get())?.isPreview == false)
            #expect(picture.texture !== preview, "the final image replaced the preview")
            #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), color, tolerance: 8))
            #expect(origin.hits("/gated/prog") == 1)
        }
    }

    @Test("a ThumbHash or BlurHash placeholder: decoded off the main actor, on screen while loading, then the image replaces it")
    func hashPlaceholders() async throws {
        try await withOrigin { origin, pipeline in
            let hashColor: (UInt8, UInt8, UInt8) = (30, 160, 60)
            let hashed = try Self.solid(hashColor)
            let placeholders: [Placeholder] = [
                .thumbHash(try ThumbHash(image: hashed).string),
                .blurHash(try BlurHash(image: hashed).string, width: 64, height: 48)
            ]
            for (index, placeholder) in placeholders.enumerated() {
                let item = 40 + index
                let final = ColorImages.color(item)
                origin.setBody("hash\(index)", try ColorImages.png(red: final.red, green: final.green, blue: final.blue), cut: 16)
                let picture = OspreyPicture()
                gtk_widget_set_size_request(picture.widget, 80, 60)
                let window = await GTKHarness.window(picture.widget, width: 80, height: 60)
                defer { gtk_window_destroy(GtkWindowPointer(window)) }
                let results = Results()
                picture.osprey.setImage(
                    with: .url(origin.url("/gated/hash\(index)")), placeholder: placeholder, pipeline: pipeline,
                    completion: { results.all.append($0) })
                // Not decoded in setImage: the widget is empty when it returns.
                #expect(picture.texture == nil)
                #expect(await GTKHarness.pump("the picture's first texture") { picture.texture != nil })
                let texture = try #require(picture.texture)
                #expect(texture.width == 80 || texture.height == 60, "decoded at the widget's size: \(texture.width)x\(texture.height)")
                await GTKHarness.pumpFrames(1, of: window)
                #expect(results.all.isEmpty && picture.osprey.isLoading)
                #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), hashColor, tolerance: 12))
                origin.openGate("hash\(index)")
                #expect(await GTKHarness.pump("the request's completion") { !results.all.isEmpty })
                await GTKHarness.pumpFrames(1, of: window)
                #expect(GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), final))
            }
        }
    }
}

/// The completions a test's request got, on the main actor.
@MainActor
final class Results {
    var all: [Result<ImageResult, OspreyError>] = []
}
