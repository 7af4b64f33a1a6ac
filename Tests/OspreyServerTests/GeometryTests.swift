import Foundation
import Osprey
import Testing

@testable import OspreyServer

/// Where the crop of a fill lands: gravity, imgproxy's offsets and focus point, thumbor's focal
/// region, computed for a 400x300 source (no HTTP).
@Suite("Server geometry: gravity offsets, focus points, focal regions", .timeLimit(.minutes(1)))
struct GeometryTests {
    /// The identifiers of what `job`'s resize step amounts to for a 400x300 source.
    static func steps(_ job: ImageJob) -> [String] {
        let step = job.processors.compactMap { $0 as? ResizeStep }.first
        return step?.concrete(sourceWidth: 400, sourceHeight: 300).map(\.identifier) ?? job.processors.map(\.identifier)
    }

    static func imgproxy(_ options: String) throws -> ImageJob {
        try ImgproxyURLParser(allowUnsigned: true).parse(path: "/_/\(options)/plain/http://example.com/a.jpg")
    }

    static func thumbor(_ path: String) throws -> ImageJob {
        try ThumborURLParser(signer: nil, allowUnsafe: true).parse(path: "unsafe/\(path)/http://example.com/a.jpg", query: nil)
    }

    @Test func imgproxyGravityOffsetsMoveTheCropAwayFromTheEdge() throws {
        // 400x300 filled into 200x100: scaled to 200x150, 50 rows to spare.
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:no:0:5")) == ["resize:200x150:stretch", "crop:200x100:0:5"])
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:so:0:5")) == ["resize:200x150:stretch", "crop:200x100:0:45"])
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:ce:0:-10")) == ["resize:200x150:stretch", "crop:200x100:0:15"])
        // Kept inside the image.
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:no:0:500")) == ["resize:200x150:stretch", "crop:200x100:0:50"])
        // Without offsets the plain gravity crop (and the decode-planned resize) stays.
        #expect(try Self.imgproxy("rs:fill:200:100:1/g:ce").processors.map(\.identifier) == ["resize:200x100:fill"])
        // Below 1 an offset is a fraction of the resized image's side: 0.2 x 150 rows = 30.
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:no:0:0.2")) == ["resize:200x150:stretch", "crop:200x100:0:30"])
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100/g:so:0:-0.1")) == ["resize:200x150:stretch", "crop:200x100:0:50"])
        // Pixel offsets are multiplied by the device pixel ratio (with enlarge: 400x200 from 400x300).
        #expect(try Self.steps(Self.imgproxy("rs:fill:200:100:1/dpr:2/g:no:0:5")) == ["crop:400x200:0:10"])
        #expect(throws: ServerError.self) { try Self.imgproxy("g:no:x:1") }
    }

    @Test func imgproxyExtendGravityTakesOffsets() throws {
        let clear = RGBAColor.clear.hex
        // 400x300 on a 500x500 canvas at the top left, moved 10 right and 20 down: the margins that put it there.
        #expect(try Self.steps(Self.imgproxy("rs:fit:500:500:0:1/ex:1:nowe:10:20")) == ["padding:20:90:180:10:\(clear)"])
        // The extend of rs takes a gravity too; fractions are of the canvas (0.1 x 500 = 50 up from the bottom).
        #expect(try Self.steps(Self.imgproxy("rs:fit:500:500:0:1:so:0:0.1")) == ["padding:150:50:50:50:\(clear)"])
        #expect(try Self.steps(Self.imgproxy("s:500:500:0:1:we")) == ["pad:500x500:\(clear):left"])
        // exar with offsets: fitted to 133x100 in a 2:1 box, a 200x100 canvas, 10 from the right edge.
        #expect(try Self.steps(Self.imgproxy("rs:fit:200:100/exar:1:ea:10")) == ["resize:133x100:stretch", "padding:0:10:0:57:\(clear)"])
        // Offsets take the extend off the decode-planned path; without them it stays.
        #expect(try Self.imgproxy("rs:fit:500:500:1:1/ex:1:ce:10:0").processors.first is ResizeStep)
        #expect(try Self.imgproxy("rs:fit:500:500:1:1").processors.map(\.identifier) == ["resize:500x500:fit", "pad:500x500:\(clear)"])
    }

    @Test func imgproxyFocusPointCentresTheCrop() throws {
        // 400x300 into 100x100: scaled 133x100, 33 columns to spare.
        #expect(try Self.steps(Self.imgproxy("rs:fill:100:100/g:fp:1:0.5")) == ["resize:133x100:stretch", "crop:100x100:33:0"])
        #expect(try Self.steps(Self.imgproxy("rs:fill:100:100/g:fp:0.4:0.5")) == ["resize:133x100:stretch", "crop:100x100:3:0"])
        #expect(throws: ServerError.self) { try Self.imgproxy("g:fp:2:0.5") }
        #expect(throws: ServerError.self) { try Self.imgproxy("g:fp:0.5") }
    }

    @Test func thumborFocalRegionCentresTheCrop() throws {
        // Centre (350, 150) in source pixels: as far right as the crop can go.
        #expect(try Self.steps(Self.thumbor("100x100/filters:focal(300x100:400x200)")) == ["resize:133x100:stretch", "crop:100x100:33:0"])
        // Two regions: their union's centre (100, 150) -> 33 - 50 < 0: the left edge.
        #expect(try Self.steps(Self.thumbor("100x100/filters:focal(0x100:50x200,150x100:200x200)")) == ["resize:133x100:stretch", "crop:100x100:0:0"])
        // A point.
        #expect(try Self.steps(Self.thumbor("100x100/filters:focal(350x150)")) == ["resize:133x100:stretch", "crop:100x100:33:0"])
        #expect(throws: ServerError.self) { try Self.thumbor("100x100/filters:focal(abc)") }
        #expect(throws: ServerError.self) { try Self.thumbor("100x100/filters:focal()") }
    }

    @Test func thumborFillBlurAutoAndRepeatParse() throws {
        let blur = try Self.thumbor("fit-in/200x200/filters:fill(blur)")
        #expect(blur.processors.map(\.identifier).last == "backdrop:200x200:blur:50")
        let auto = try Self.thumbor("fit-in/200x200/filters:fill(auto)")
        #expect(auto.processors.map(\.identifier).last == "backdrop:200x200:median")
        let mark = try Self.thumbor("200x200/filters:watermark(http://example.com/m.png,repeat,repeat,30)")
        #expect(mark.watermarks.first?.x == .repeat && mark.watermarks.first?.y == .repeat)
    }
}
