import Testing

@testable import Osprey

@Suite("Processor spec", .timeLimit(.minutes(5)))
struct ProcessingSpecTests {
    @Test("the example from the issue parses into processors, format and quality")
    func example() throws {
        let spec = try ProcessingSpec(parsing: "resize:200x200:fill,blur:2,round:12,format:webp:80")
        #expect(spec.processor.identifier == "resize:200x200:fill,blur:2,round:12")
        #expect(spec.format == .webp)
        #expect(spec.quality == 80)
        #expect(spec.description == "resize:200x200:fill,blur:2,round:12,format:webp:80")
        let image = try spec.processor.process(try TestData.image("rocket.jpg"))
        #expect((image.width, image.height) == (200, 200))
    }

    @Test(
        "every step and its canonical form",
        arguments: [
            ("resize:10x20", "resize:10x20:fit"), ("resize:10x20:none", "resize:10x20:stretch"),
            ("thumbnail:64", "downsample:64x64"), ("downsample:30x40", "downsample:30x40"),
            ("crop:10x10", "crop:10x10:center"), ("crop:10x10:centre", "crop:10x10:center"),
            ("crop:10x10:TopLeft", "crop:10x10:topleft"), ("crop:10x20:3:4", "crop:10x20:3:4"),
            ("round:8", "round:8"), ("round:8:all:FFFFFF", "round:8:all:ffffff"), ("round:8:tl+tr", "round:8:tl+tr"),
            ("border:2", "border:2:000000"), ("border:2:ff000080", "border:2:ff000080"),
            ("blur:0.5", "blur:0.5"), ("sharpen", "sharpen:1"), ("tint:#00ff00", "tint:00ff00"),
            ("overlay:ff0000", "overlay:ff0000:0.5"), ("grayscale", "grayscale"), ("greyscale", "grayscale"),
            ("bw", "bw:128"), ("bw:100", "bw:100"), ("color:0.1", "color:0.1:1:1"), ("color:0:1.5:0", "color:0:1.5:0"),
            ("flip", "flip:h"), ("flip:v", "flip:v"), ("flip:hv", "flip:hv"), ("rotate:180", "rotate:180"),
            ("format:jpg", "format:jpeg"), ("quality:50", "quality:50"), ("", ""),
            (" resize:5x5 , blur:1 ", "resize:5x5:fit,blur:1")
        ])
    func canonicalForms(input: String, canonical: String) throws {
        #expect(try ProcessingSpec(parsing: input).description == canonical)
    }

    @Test(
        "bad specs name the failing step",
        arguments: [
            "resize", "resize:200", "resize:ax2", "resize:0x10", "resize:10x10:cover", "blur", "blur:-1", "blur:x",
            "crop:10x10:middle", "crop:10x10:1", "round:0", "round:4:xx", "tint:red", "tint:12345", "overlay:000000:3",
            "bw:300", "color:2", "flip:d", "rotate:45", "format:svg", "format:png:0", "quality:101", "nope", "blur:1,,resize:2x2",
            "grayscale:1"
        ])
    func badSpecs(input: String) {
        do {
            _ = try ProcessingSpec(parsing: input)
            Issue.record("\"\(input)\" parsed")
        } catch {
            guard case .processing(.invalidSpec(let spec, let reason)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(spec == input)
            #expect(reason.contains("step"))
        }
    }
}
