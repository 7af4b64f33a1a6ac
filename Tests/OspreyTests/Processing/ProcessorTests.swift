import Foundation
import Testing

@testable import Osprey

@Suite("Processors", .timeLimit(.minutes(5)))
struct ProcessorTests {
    /// processor, expected identifier, expected output size for a 500 x 500 input.
    static let cases: [(any ImageProcessing, String, Int, Int)] = [
        (ImageProcessors.Resize(width: 200, height: 100), "resize:200x100:fit", 100, 100),
        (ImageProcessors.Resize(width: 200, height: 100, contentMode: .fill), "resize:200x100:fill", 200, 100),
        (ImageProcessors.Resize(width: 200, height: 100, contentMode: .stretch), "resize:200x100:stretch", 200, 100),
        (ImageProcessors.Resize(width: 800, height: 800), "resize:800x800:fit", 800, 800),
        (ImageProcessors.Downsample(width: 120, height: 300), "downsample:120x300", 120, 120),
        (ImageProcessors.Downsample(maxPixelSize: 1000), "downsample:1000x1000", 500, 500),
        (ImageProcessors.Crop(width: 100, height: 50, gravity: .bottomRight), "crop:100x50:bottomright", 100, 50),
        (ImageProcessors.Crop(.rect(x: 450, y: 480, width: 100, height: 100)), "crop:100x100:450:480", 50, 20),
        (ImageProcessors.Crop(width: 900, height: 40), "crop:900x40:center", 500, 40),
        (ImageProcessors.SmartCrop(width: 120, height: 80), "smartcrop:120x80", 120, 80),
        (ImageProcessors.SmartCrop(width: 900, height: 40), "smartcrop:900x40", 500, 40),
        (ImageProcessors.SmartResize(width: 120, height: 80), "smartresize:120x80", 120, 80),
        (ImageProcessors.RoundCorner(radius: 20), "round:20", 500, 500),
        (ImageProcessors.RoundCorner(radius: 20, corners: [.topLeft, .bottomRight], background: .white), "round:20:tl+br:ffffff", 500, 500),
        (ImageProcessors.Border(width: 5, color: RGBAColor(red: 255, green: 0, blue: 0)), "border:5:ff0000", 510, 510),
        (ImageProcessors.Blur(sigma: 2), "blur:2", 500, 500),
        (ImageProcessors.Blur(sigma: 1.5), "blur:1.5", 500, 500),
        (ImageProcessors.Tint(color: RGBAColor(red: 0, green: 0, blue: 255, alpha: 128)), "tint:0000ff80", 500, 500),
        (ImageProcessors.Grayscale(), "grayscale", 500, 500),
        (ImageProcessors.BlackWhite(), "bw:128", 500, 500),
        (ImageProcessors.ColorControls(brightness: 0.1, contrast: 1.2, saturation: 0.5), "color:0.1:1.2:0.5", 500, 500),
        (ImageProcessors.Sharpen(), "sharpen:1", 500, 500),
        (ImageProcessors.Flip(horizontal: true, vertical: true), "flip:hv", 500, 500),
        (ImageProcessors.Rotate(degrees: 90), "rotate:90", 500, 500),
        (ImageProcessors.Rotate(degrees: -90), "rotate:270", 500, 500),
        (ImageProcessors.Overlay(color: RGBAColor(red: 255, green: 0, blue: 0), fraction: 0.25), "overlay:ff0000:0.25", 500, 500)
    ]

    @Test("each processor's identifier and output size", arguments: 0..<cases.count)
    func processorOutput(index: Int) throws {
        let (processor, identifier, width, height) = Self.cases[index]
        #expect(processor.identifier == identifier)
        let image = try TestData.image("logo.png")
        let output = try processor.process(image)
        #expect((output.width, output.height) == (width, height), "\(identifier)")
        #expect(output.storage.isMaterialised)
        #expect(output.storage.bandFormat.rawValue == 0, "8-bit unsigned bands")
        // The identifier parses back into an equivalent processor.
        #expect(try ProcessingSpec(parsing: identifier).processor.identifier == identifier)
    }

    @Test("rotation by 90° swaps a non-square image's sides")
    func rotationSwapsSides() throws {
        let image = try TestData.image("rocket.jpg")
        let rotated = try ImageProcessors.Rotate(degrees: 90).process(image)
        #expect((rotated.width, rotated.height) == (427, 640))
    }

    @Test("processors change pixels the way they say")
    func pixelEffects() throws {
        let hopper = try TestData.image("hopper.jpg")
        let grey = try Pixels.pixel(try ImageProcessors.Grayscale().process(hopper), x: 64, y: 64)
        #expect(abs(Int(grey[0]) - Int(grey[1])) <= 1 && abs(Int(grey[1]) - Int(grey[2])) <= 1)
        let bw = Set(try ImageProcessors.BlackWhite().process(hopper).rgbaPixels().enumerated().filter { $0.offset % 4 != 3 }.map(\.element))
        #expect(bw.isSubset(of: [0, 255]))
        let rounded = try ImageProcessors.RoundCorner(radius: 30).process(hopper)
        #expect(rounded.hasAlpha)
        #expect(try Pixels.pixel(rounded, x: 0, y: 0)[3] == 0)
        #expect(try Pixels.pixel(rounded, x: 64, y: 64)[3] == 255)
        let someCorners = try ImageProcessors.RoundCorner(radius: 30, corners: [.topRight]).process(hopper)
        #expect(try Pixels.pixel(someCorners, x: 0, y: 0)[3] == 255)
        #expect(try Pixels.pixel(someCorners, x: 127, y: 0)[3] == 0)
        let filled = try ImageProcessors.RoundCorner(radius: 30, background: RGBAColor(red: 0, green: 255, blue: 0)).process(hopper)
        #expect(!filled.hasAlpha)
        #expect(try Pixels.pixel(filled, x: 0, y: 0) == [0, 255, 0, 255])
        let bordered = try ImageProcessors.Border(width: 3, color: RGBAColor(red: 255, green: 0, blue: 0)).process(hopper)
        #expect(try Pixels.pixel(bordered, x: 1, y: 1) == [255, 0, 0, 255])
        let tinted = try ImageProcessors.Tint(color: RGBAColor(red: 0, green: 0, blue: 255)).process(hopper)
        #expect(try Pixels.pixel(tinted, x: 10, y: 10) == [0, 0, 255, 255])
        let flipped = try ImageProcessors.Flip().process(hopper)
        #expect(try Pixels.pixel(flipped, x: 0, y: 5) == Pixels.pixel(hopper, x: 127, y: 5))
        let brighter = try ImageProcessors.ColorControls(brightness: 0.2).process(hopper)
        #expect(Pixels.channelMeans(try brighter.rgbaPixels())[0] > Pixels.channelMeans(try hopper.rgbaPixels())[0] + 30)
        let untouched = try ImageProcessors.ColorControls().process(hopper)
        #expect(Pixels.meanDifference(try untouched.rgbaPixels(), try hopper.rgbaPixels()) < 1)
        // Transparency is kept by colour processors.
        #expect(try Pixels.pixel(try ImageProcessors.Tint(color: .black).process(rounded), x: 0, y: 0)[3] == 0)
        #expect(try Pixels.pixel(try ImageProcessors.Overlay(color: .black).process(rounded), x: 0, y: 0)[3] == 0)
        #expect(try Pixels.pixel(try ImageProcessors.Grayscale().process(rounded), x: 0, y: 0)[3] == 0)
    }

    @Test("animation frames are kept by processors")
    func framesKept() throws {
        let image = try TestData.image("iss634.gif")
        let processed = try
            (ImageProcessors.Resize(width: 100, height: 50, contentMode: .fill).append(ImageProcessors.Crop(width: 40, height: 40)).append(
                ImageProcessors.Rotate(degrees: 90)
            )
            .append(ImageProcessors.Blur(sigma: 1))).process(image)
        #expect((processed.width, processed.height, processed.frameCount) == (40, 40, 42))
        let smart = try ImageProcessors.SmartCrop(width: 30, height: 20).process(image)
        #expect((smart.width, smart.height, smart.frameCount) == (30, 20, 42))
        #expect(processed.frameDelays == image.frameDelays)
    }

    @Test("composition runs in order and joins identifiers")
    func composition() throws {
        let resizeThenCrop = ImageProcessors.Resize(width: 200, height: 200).append(ImageProcessors.Crop(width: 100, height: 50))
        #expect(resizeThenCrop.identifier == "resize:200x200:fit,crop:100x50:center")
        let image = try TestData.image("rocket.jpg")
        #expect(try resizeThenCrop.process(image).width == 100)
        // Order matters: cropping first then fitting into 200x200 gives a different size.
        let cropThenResize = ImageProcessors.Crop(width: 100, height: 50).append(ImageProcessors.Resize(width: 200, height: 200))
        #expect(cropThenResize.identifier == "crop:100x50:center,resize:200x200:fit")
        #expect(try cropThenResize.process(image).width == 200)
        // Nested compositions flatten; the identity disappears.
        let nested = ImageProcessors.Composition([ImageProcessors.Identity(), resizeThenCrop, ImageProcessors.Blur(sigma: 1)])
        #expect(nested.processors.count == 3)
        #expect(nested.identifier == "resize:200x200:fit,crop:100x50:center,blur:1")
        #expect(ImageProcessors.Identity().identifier.isEmpty)
        #expect(try ImageProcessors.Composition([]).process(image).width == 640)
    }

    /// A processor that is not built in: it must compose with the built-in ones.
    struct Halve: ImageProcessing {
        var identifier: String { "test.halve" }
        func process(_ image: Image) throws(OspreyError) -> Image {
            try ImageProcessors.Resize(width: image.width / 2, height: image.height / 2, contentMode: .stretch).process(image)
        }
    }

    @Test("custom processors compose with built-in ones")
    func customProcessor() throws {
        let chain = ImageProcessors.Crop(width: 100, height: 100).append(Halve()).append(ImageProcessors.Border(width: 1))
        #expect(chain.identifier == "crop:100x100:center,test.halve,border:1:000000")
        let output = try chain.process(try TestData.image("rocket.jpg"))
        #expect((output.width, output.height) == (52, 52))
    }

    @Test("trim cuts the border of a corner's or a given colour, grey images too, and parses back")
    func trim() throws {
        // Grey 60x40 at 200, a dark block at x 10..<30, y 5..<15, a black 4x4 bottom-right corner
        // (find_trim's median filter ignores single pixels).
        var grey = [UInt8](repeating: 200, count: 60 * 40)
        for y in 5..<15 { for x in 10..<30 { grey[y * 60 + x] = 40 } }
        for y in 36..<40 { for x in 56..<60 { grey[y * 60 + x] = 0 } }
        let image = try Image(rgba: grey.flatMap { value -> [UInt8] in [value, value, value, 255] }, width: 60, height: 40)
        let cases: [(ImageProcessors.Trim, String, Int, Int)] = [
            (ImageProcessors.Trim(), "trim:10", 50, 35),
            (ImageProcessors.Trim(threshold: 2.5, background: .bottomRight), "trim:2.5:bottomright", 60, 40),
            (ImageProcessors.Trim(background: .color(RGBAColor(red: 200, green: 200, blue: 200))), "trim:10:c8c8c8", 50, 35),
            (ImageProcessors.Trim(background: .color(RGBAColor(red: 255, green: 0, blue: 0)), equalVertical: true), "trim:10:ff0000:v", 60, 40),
            // Left 10, right 0: none off either; top 5, bottom 0: none either.
            (ImageProcessors.Trim(equalHorizontal: true, equalVertical: true), "trim:10:topleft:hv", 60, 40),
            (ImageProcessors.Trim(equalHorizontal: true), "trim:10:topleft:h", 60, 35),
            (ImageProcessors.Trim(threshold: 250), "trim:250", 60, 40)
        ]
        // A grey source trims as its RGB copy does, against a corner or a colour.
        let camera = try TestData.image("camera.png")
        let cameraRGB = try Image(rgba: try camera.rgbaPixels(), width: camera.width, height: camera.height)
        for (trim, identifier, width, height) in cases {
            #expect(trim.identifier == identifier)
            #expect(try ProcessingSpec(parsing: identifier).processor.identifier == identifier)
            let out = try trim.process(image)
            #expect((out.width, out.height) == (width, height), "\(identifier)")
            let (one, three) = (try trim.process(camera), try trim.process(cameraRGB))
            #expect((one.width, one.height) == (three.width, three.height), "\(identifier)")
        }
        #expect(try ProcessingSpec(parsing: "trim").processor.identifier == "trim:10")
        #expect(throws: OspreyError.self) { try ProcessingSpec(parsing: "trim:10:nope") }
        #expect(throws: OspreyError.self) { try ProcessingSpec(parsing: "trim:10:topleft:x") }
    }

    @Test("bad arguments give typed errors naming the processor")
    func badArguments() throws {
        let image = try TestData.image("hopper.jpg")
        #expect(
            throws: OspreyError.processing(.invalidArgument(processor: "crop:10x10:500:500", message: "the crop does not overlap the 128x128 image"))
        ) {
            try ImageProcessors.Crop(.rect(x: 500, y: 500, width: 10, height: 10)).process(image)
        }
        #expect(throws: OspreyError.self) { try ImageProcessors.Resize(width: 0, height: 10).process(image) }
        #expect(throws: OspreyError.self) { try ImageProcessors.Rotate(degrees: 45).process(image) }
        #expect(throws: OspreyError.self) { try ImageProcessors.Blur(sigma: -1).process(image) }
        #expect(throws: OspreyError.self) { try ImageProcessors.Overlay(color: .black, fraction: 2).process(image) }
        #expect(throws: OspreyError.self) { try ImageProcessors.SmartCrop(width: 0, height: 10).process(image) }
    }
}
