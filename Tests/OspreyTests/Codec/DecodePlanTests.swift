import Foundation
import Testing

@testable import Osprey

/// Decode planning: a chain's first shrinking step folded into the decode (libvips shrink-on-load).
@Suite("Decode planning", .timeLimit(.minutes(3)))
struct DecodePlanTests {
    /// The largest mean absolute difference (per RGBA byte, 0...255) allowed between the planned
    /// decode and full decode + processing: shrink-on-load resamples a little differently (JPEG DCT
    /// scaling, one reduce instead of two) but the picture, its size and its crop are the same.
    static let tolerance = 6.0

    /// Runs `spec` on `name` both ways; returns (planned, full, folded).
    func bothWays(_ name: String, _ spec: String) throws -> (planned: Image, full: Image, folded: Bool) {
        try bothWays(data: try TestData.data(name), spec)
    }

    func bothWays(data: Data, _ spec: String) throws -> (planned: Image, full: Image, folded: Bool) {
        let processors = ImagePipeline.stages(of: try ProcessingSpec(parsing: spec).processor)
        let plan = DecodePlan(processors: processors, decoding: .default)
        let (decoded, folded) = try ImageDecoder().decode(data, plan: plan)
        let planned = try ImageProcessors.Composition(Array(processors.dropFirst(folded ? 1 : 0))).process(decoded)
        let full = try ImageProcessors.Composition(processors).process(try ImageDecoder().decode(data))
        return (planned, full, folded)
    }

    @Test(
        "each shrinking step and chains of them fold into the decode and match the full decode",
        arguments: [
            "resize:80x80", "resize:80x60:fill", "resize:70x50:stretch", "downsample:60x60", "thumbnail:64", "thumbnail:33",
            "resize:90x90:fill,crop:40x40", "thumbnail:64,blur:1", "resize:90x90,resize:40x40:fill"
        ])
    func folds(spec: String) throws {
        for name in ["rocket.jpg", "coffee.png", "hopper.webp", "hopper_orientation_6.jpg", "pil_sample_cmyk.jpg"] {
            let (planned, full, folded) = try bothWays(name, spec)
            #expect(folded, "\(name) \(spec): not folded")
            #expect(
                planned.width == full.width && planned.height == full.height,
                "\(name) \(spec): \(planned.width)x\(planned.height) vs \(full.width)x\(full.height)")
            #expect(planned.hasAlpha == full.hasAlpha)
            guard planned.width == full.width, planned.height == full.height else { continue }
            let difference = Pixels.meanDifference(try planned.rgbaPixels(), try full.rgbaPixels())
            #expect(difference <= Self.tolerance, "\(name) \(spec): mean difference \(difference)")
        }
    }

    @Test("the decode itself has the step's size, after EXIF orientation")
    func decodedSize() throws {
        let data = try TestData.data("rocket.jpg")  // 640x427
        let (fill, folded) = try ImageDecoder().decode(data, plan: DecodePlan(width: 100, height: 100, fit: .fill))
        #expect(folded && fill.width == 100 && fill.height == 100)
        let (fit, _) = try ImageDecoder().decode(data, plan: DecodePlan(width: 320, height: 320, fit: .fit))
        #expect(fit.width == 320 && fit.height == 214)
        let (tenth, _) = try ImageDecoder().decode(data, plan: DecodePlan(width: 64, height: 64, fit: .downsample))
        #expect(tenth.width == 64 && tenth.height == 43, "427 / 10 rounds to 43, as the full decode's resize does")
        // Orientation 6 turns the stored frame by 90 degrees; a 64x32 stretch is measured upright.
        let rotated = try TestData.data("hopper_orientation_6.jpg")
        let (stretched, _) = try ImageDecoder().decode(rotated, plan: DecodePlan(width: 64, height: 32, fit: .stretch))
        #expect(stretched.width == 64 && stretched.height == 32)
    }

    @Test("steps that must not fold: an upscale, a step before the resize, a user thumbnail")
    func notFolded() throws {
        #expect(try bothWays("hopper.jpg", "resize:400x400").folded == false)
        #expect(try bothWays("hopper.jpg", "resize:400x100:fill").folded == false)
        #expect(try bothWays("hopper.jpg", "resize:100x400:stretch").folded == false)
        let upscale = try bothWays("hopper.jpg", "resize:400x400")
        #expect(upscale.planned.width == 400 && upscale.full.width == 400)
        for spec in ["blur:1,resize:64x64", "crop:64x64,resize:32x32", "round:4,thumbnail:32"] {
            let processors = ImagePipeline.stages(of: try ProcessingSpec(parsing: spec).processor)
            #expect(DecodePlan(processors: processors, decoding: .default) == nil, "\(spec)")
        }
        let resize = [ImageProcessors.Resize(width: 10, height: 10)]
        #expect(DecodePlan(processors: resize, decoding: DecodingOptions(thumbnail: .init(maxPixelSize: 50))) == nil)
    }

    @Test("a step with nothing to do does not fold, and gives back the full decode itself")
    func nothingToDo() throws {
        // hopper.jpg is 128 x 128: each of these leaves it at 128 x 128.
        for spec in ["thumbnail:128", "thumbnail:200", "downsample:128x300", "resize:128x128", "resize:128x200", "resize:128x128:fill"] {
            let (planned, full, folded) = try bothWays("hopper.jpg", spec)
            #expect(!folded, "\(spec): folded")
            #expect(planned.width == 128 && planned.height == 128 && full.width == 128 && full.height == 128, "\(spec)")
            #expect(Pixels.meanDifference(try planned.rgbaPixels(), try full.rgbaPixels()) == 0, "\(spec)")
        }
        let image = try ImageDecoder().decode(try TestData.data("hopper.jpg"))
        let steps: [any ImageProcessing] = [
            ImageProcessors.Downsample(maxPixelSize: 128), ImageProcessors.Downsample(width: 500, height: 200),
            ImageProcessors.Resize(width: 128, height: 300), ImageProcessors.Resize(width: 128, height: 128, contentMode: .stretch)
        ]
        for processor in steps {
            #expect(try processor.process(image).storage === image.storage, "\(processor.identifier) made new pixels")
        }
        // One pixel more or less is a resize again.
        #expect(try ImageProcessors.Resize(width: 129, height: 300).process(image).width == 129)
        #expect(try ImageProcessors.Downsample(maxPixelSize: 127).process(image).width == 127)
        #expect(try bothWays("hopper.jpg", "resize:127x127:fill").folded)
    }

    @Test("animations keep their frames: fit folds, fill runs frame by frame")
    func animations() throws {
        let fit = try bothWays("iss634.gif", "resize:100x100")
        #expect(fit.folded)
        #expect(fit.planned.frameCount == 42 && fit.planned.frameCount == fit.full.frameCount)
        #expect(fit.planned.width == fit.full.width && fit.planned.height == fit.full.height)
        let fill = try bothWays("iss634.gif", "resize:80x40:fill")
        #expect(!fill.folded)
        #expect(fill.planned.frameCount == 42 && fill.planned.width == 80 && fill.planned.height == 40)
    }

    @Test("a PNG's alpha band survives the planned decode: opaque (resized without it), and with transparency")
    func pngAlpha() throws {
        // logo.png: 500 x 500 RGBA with alpha 255 everywhere, resized without the band.
        let opaque = try bothWays("logo.png", "thumbnail:256")
        #expect(opaque.folded && opaque.planned.width == 256 && opaque.planned.height == 256)
        #expect(opaque.planned.hasAlpha && opaque.full.hasAlpha)
        let opaquePixels = try opaque.planned.rgbaPixels()
        #expect(Pixels.channelMeans(opaquePixels)[3] == 255)
        let opaqueDifference = Pixels.meanDifference(opaquePixels, try opaque.full.rgbaPixels())
        #expect(opaqueDifference <= 1.0, "the same resize with or without the opaque band: \(opaqueDifference)")
        // A PNG with transparent corners takes the premultiplied resize and keeps them.
        let rounded = try ImageDecoder().decode(try TestData.data("rocket.jpg"), processedBy: try ProcessingSpec(parsing: "round:60").processor)
        let transparent = try bothWays(data: try rounded.encoded(as: .png), "resize:320x320")
        #expect(transparent.folded && transparent.planned.width == 320 && transparent.planned.height == 214)
        #expect(try Pixels.pixel(transparent.planned, x: 0, y: 0)[3] == 0, "a transparent corner")
        #expect(try Pixels.pixel(transparent.planned, x: 160, y: 107)[3] == 255, "an opaque middle")
        let difference = Pixels.meanDifference(try transparent.planned.rgbaPixels(), try transparent.full.rgbaPixels())
        #expect(difference <= Self.tolerance, "mean difference \(difference)")
        // Transparency only in the last lines: found after the opaque top has been read.
        let bottom = try ImageDecoder().decode(try TestData.data("logo.png"), processedBy: try ProcessingSpec(parsing: "round:40:bl+br").processor)
        let late = try bothWays(data: try bottom.encoded(as: .png), "thumbnail:100")
        #expect(late.folded && late.planned.width == 100 && late.planned.height == 100)
        #expect(try Pixels.pixel(late.planned, x: 0, y: 99)[3] == 0 && Pixels.pixel(late.planned, x: 0, y: 0)[3] == 255)
        let lateDifference = Pixels.meanDifference(try late.planned.rgbaPixels(), try late.full.rgbaPixels())
        #expect(lateDifference <= Self.tolerance, "mean difference \(lateDifference)")
    }

    @Test("ImageDecoder.decode(_:processedBy:) is the planned path")
    func publicEntry() throws {
        let data = try TestData.data("rocket.jpg")
        let spec = try ProcessingSpec(parsing: "thumbnail:256,round:8")
        let image = try ImageDecoder().decode(data, processedBy: spec.processor)
        #expect(image.width == 256 && image.height == 171 && image.hasAlpha)
        #expect(image.format == .png, "a JPEG that gained alpha is a PNG")
    }
}
