import Foundation
import Osprey
import Testing

@testable import OspreyServer

/// imgproxy's resizing options that depend on the source's size — `auto`, `fill-down`, `force`
/// without `enlarge`, `dpr`, `extend` — and `rot`, `bg`, `mb`, computed for a 400x300 source as
/// imgproxy's `calcScale` does (no HTTP).
@Suite("imgproxy resizing: auto, fill-down, force, dpr, extend, rotate, background", .timeLimit(.minutes(1)))
struct ImgproxyResizingTests {
    /// The identifiers of `options`' processors with the resize step made concrete for 400x300.
    static func steps(_ options: String) throws -> [String] {
        let job = try GeometryTests.imgproxy(options)
        return job.processors.flatMap { processor -> [String] in
            guard let step = processor as? ResizeStep else { return [processor.identifier] }
            return step.concrete(sourceWidth: 400, sourceHeight: 300).map(\.identifier)
        }
    }

    @Test func autoFillsWhenTheOrientationsMatchAndFitsOtherwise() throws {
        // A landscape box for a landscape source: fill (scaled to cover 200x100, cropped).
        #expect(try Self.steps("rs:auto:200:100") == ["resize:200x150:stretch", "crop:200x100:center"])
        // A portrait box: fit inside it.
        #expect(try Self.steps("rs:auto:100:200") == ["resize:100x75:stretch"])
    }

    @Test func fillDownKeepsTheBoxAspectRatioWhenTheSourceIsTooSmall() throws {
        // 400x300 cannot cover 800x200 without enlarging: fill crops to at most the box...
        #expect(try Self.steps("rs:fill:800:200") == ["crop:400x200:center"])
        // ...fill-down to the box's 4:1.
        #expect(try Self.steps("rs:fill-down:800:200") == ["crop:400x100:center"])
        // Large enough: the same as fill.
        #expect(try Self.steps("rs:fill-down:200:100") == ["resize:200x150:stretch", "crop:200x100:center"])
        #expect(try GeometryTests.imgproxy("rs:fill-down:200:100:1").processors.map(\.identifier) == ["resize:200x100:fill"])
    }

    @Test func forceWithoutEnlargeKeepsTheForcedAspectAndGrowsNoAxis() throws {
        // 800x100 would double the width: both axes shrink by 2 from the box instead.
        #expect(try Self.steps("rs:force:800:100") == ["resize:400x50:stretch"])
        #expect(try Self.steps("rs:force:200:100") == ["resize:200x100:stretch"])
        #expect(try GeometryTests.imgproxy("rs:force:800:100:1").processors.map(\.identifier) == ["resize:800x100:stretch"])
    }

    @Test func dprMultipliesTheBoxWithinEnlarge() throws {
        // A fit without enlarge is a downsample into the multiplied box (the decode can plan it).
        #expect(try GeometryTests.imgproxy("rs:fit:100:100/dpr:2").processors.map(\.identifier) == ["downsample:200x200"])
        #expect(try Self.steps("rs:fill:100:100/dpr:2") == ["resize:267x200:stretch", "crop:200x200:center"])
        // dpr 3 would enlarge: the ratio stops at the source's size, the box's shape kept.
        #expect(try Self.steps("rs:fill:200:200/dpr:3") == ["crop:300x300:center"])
        #expect(try GeometryTests.imgproxy("rs:fill:100:100:1/dpr:1.5").processors.map(\.identifier) == ["resize:150x150:fill"])
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("dpr:0") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("dpr:9") }
        // The multiplied box stays within the largest box a size takes.
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("rs:fit:16384:100:1/dpr:2") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("dpr:4/w:5000") }
    }

    @Test func extendPlacesASmallerResultOnATransparentCanvas() throws {
        let clear = RGBAColor.clear.hex
        #expect(try Self.steps("rs:fit:800:800:0:1") == ["pad:800x800:\(clear)"])
        #expect(try Self.steps("rs:fit:200:200:0:1") == ["resize:200x150:stretch", "pad:200x200:\(clear)"])
        #expect(try Self.steps("s:200:200:0:1") == ["resize:200x150:stretch", "pad:200x200:\(clear)"])
        #expect(try Self.steps("rs:fit:200:200/ex:1:no") == ["resize:200x150:stretch", "pad:200x200:\(clear):top"])
        // With enlarge the fit touches the box and the canvas pads the other side, decode-planned.
        #expect(
            try GeometryTests.imgproxy("rs:fit:200:200:1:1").processors.map(\.identifier) == ["resize:200x200:fit", "pad:200x200:\(clear)"])
        // A result that fills the box is not padded.
        #expect(try Self.steps("rs:fill:200:100/ex:1") == ["resize:200x150:stretch", "crop:200x100:center"])
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("ex:1:no:ten:0") }
    }

    @Test func rotationTurnsTheBoxOrRunsFirst() throws {
        // Centred: the resize runs on the turned box, then the rotation.
        #expect(try GeometryTests.imgproxy("rs:fit:100:50/rot:90").processors.map(\.identifier) == ["downsample:50x100", "rotate:90"])
        #expect(try GeometryTests.imgproxy("rs:fit:100:50/rot:-180").processors.map(\.identifier) == ["downsample:100x50", "rotate:180"])
        // Placed by gravity: the rotation first, the resize on the turned source.
        let placed = try GeometryTests.imgproxy("rs:fill:100:50/g:no/rot:270").processors.map(\.identifier)
        #expect(placed.first == "rotate:270" && placed.count == 2)
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("rot:45") }
    }

    @Test func paddingTakesCSSShorthandAndTheDeviceRatio() throws {
        let clear = RGBAColor.clear.hex
        #expect(try GeometryTests.imgproxy("pd:10").processors.map(\.identifier) == ["padding:10:10:10:10:\(clear)"])
        #expect(try GeometryTests.imgproxy("pd:10:20").processors.map(\.identifier) == ["padding:10:20:10:20:\(clear)"])
        #expect(try GeometryTests.imgproxy("pd:1:2:3").processors.map(\.identifier) == ["padding:1:2:3:2:\(clear)"])
        #expect(try GeometryTests.imgproxy("pd:1:2:3:4/dpr:2").processors.map(\.identifier) == ["padding:2:4:6:8:\(clear)"])
        // After the resize, before the flatten onto the background.
        let chain = try GeometryTests.imgproxy("bg:ffffff/pd:5/rs:fit:100:100").processors.map(\.identifier)
        #expect(chain == ["downsample:100x100", "padding:5:5:5:5:\(clear)", "pad:0x0:ffffff"])
        #expect(ResultSize.largest(try GeometryTests.imgproxy("rs:fit:100:100/pd:10:0").processors, width: 400, height: 300) == (100, 95))
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("pd:-1") }
        // Pixels: a 4x2 image with margins 1, 2, 3, 4 is 10x6, the image at (4, 1).
        let image = try Image(rgba: [UInt8](repeating: 200, count: 4 * 2 * 4), width: 4, height: 2)
        let padded = try PaddingStep(top: 1, right: 2, bottom: 3, left: 4).process(image)
        #expect(padded.width == 10 && padded.height == 6)
        let rgba = try padded.rgbaPixels()
        func alpha(_ x: Int, _ y: Int) -> UInt8 { rgba[(y * 10 + x) * 4 + 3] }
        #expect(alpha(4, 1) == 200 && alpha(7, 2) == 200 && alpha(3, 1) == 0 && alpha(4, 0) == 0 && alpha(8, 2) == 0 && alpha(4, 3) == 0)
    }

    @Test func backgroundFlattensLastAndMaxBytesReachesTheJob() throws {
        #expect(
            try GeometryTests.imgproxy("rs:fit:100:100/bg:255:0:0").processors.last?.identifier
                == "pad:0x0:\(RGBAColor(red: 255, green: 0, blue: 0).hex)")
        #expect(try GeometryTests.imgproxy("bg:00ff00").processors.last?.identifier == "pad:0x0:\(RGBAColor(red: 0, green: 255, blue: 0).hex)")
        #expect(try GeometryTests.imgproxy("bg:ff0000/bg:").processors.isEmpty)
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("bg:zz0000") }
        #expect(throws: ServerError.self) { try GeometryTests.imgproxy("bg:1:2") }
        #expect(try GeometryTests.imgproxy("mb:5000").maxBytes == 5000)
        #expect(try GeometryTests.imgproxy("mb:0").maxBytes == nil)
        // Accepted and without effect on the pixels: Osprey never keeps metadata nor uses embedded thumbnails.
        #expect(try GeometryTests.imgproxy("kcr:1/eth:1/ph:1").processors.isEmpty)
    }
}

/// ``ResultSize``: the sizes a chain makes, worked out before decoding.
@Suite("Result size estimate", .timeLimit(.minutes(1)))
struct ResultSizeTests {
    @Test func theLargestSizeAChainMakesFromTheSourceSize() throws {
        func largest(_ options: String) throws -> (Int, Int) {
            let size = ResultSize.largest(try GeometryTests.imgproxy(options).processors, width: 400, height: 300)
            return (size.width, size.height)
        }
        #expect(try largest("rs:fit:100:100") == (100, 75))
        #expect(try largest("rs:fit:1000:1000") == (400, 300))  // no enlarge
        #expect(try largest("rs:fit:1000:1000:1") == (1000, 750))
        #expect(try largest("rs:fill:200:200:1:1/rot:90") == (200, 200))
        #expect(try largest("rs:fit:800:800:0:1") == (800, 800))  // the extend canvas
        #expect(try largest("rs:fill:16384:100:1") == (16384, 100))  // one libvips fill: only the crop is computed
        #expect(try largest("w:10") == (10, 8))
        #expect(ResultSize.largest([], width: 400, height: 300) == (400, 300))
        let thumbor = try GeometryTests.thumbor("fit-in/200x200/filters:fill(red):proportion(0.5)").processors
        #expect(ResultSize.largest(thumbor, width: 400, height: 300) == (200, 200))
        #expect(ResultSize.after(ProportionStep(factor: 0.5), (200, 200)) == (100, 100))
    }
}
