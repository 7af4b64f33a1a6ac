import Foundation
import Testing

@testable import Osprey

#if canImport(Glibc)
    import Glibc
#endif

/// The per-pixel filters behind thumbor's colour filters: lookup tables, histogram equalisation,
/// convolution and noise, checked pixel for pixel against the arithmetic they promise.
@Suite("Pixel filters: lookup, equalize, convolve, noise", .timeLimit(.minutes(2)))
struct PixelFilterTests {
    /// A `width` x `height` image whose pixel `(x, y)` is `color(x, y)` (RGBA).
    static func image(width: Int, height: Int, _ color: (Int, Int) -> [UInt8]) throws -> Image {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width { pixels += color(x, y) }
        }
        return try Image(rgba: pixels, width: width, height: height)
    }

    @Test func aLookupMapsEachChannelThroughItsTableAndKeepsAlpha() throws {
        let input = try Self.image(width: 4, height: 2) { x, y in [UInt8(x * 60), UInt8(y * 100), 200, UInt8(100 + x)] }
        let lookup = ImageProcessors.ColorLookup(
            red: ImageProcessors.ColorLookup.table { 255 - $0 }, green: ImageProcessors.ColorLookup.table { $0 + 10 },
            blue: ImageProcessors.ColorLookup.table { $0 / 2 })
        let before = try input.rgbaPixels(), after = try lookup.process(input).rgbaPixels()
        for i in stride(from: 0, to: before.count, by: 4) {
            #expect(after[i] == 255 - before[i])
            #expect(after[i + 1] == before[i + 1] + 10)
            #expect(after[i + 2] == before[i + 2] / 2)
            #expect(after[i + 3] == before[i + 3])
        }
        #expect(lookup.identifier.hasPrefix("lut:") && lookup.identifier.count == 20)
        #expect(lookup.identifier != ImageProcessors.ColorLookup(all: ImageProcessors.ColorLookup.table { 255 - $0 }).identifier)
        // The identity tables leave the image as it is.
        let identity = ImageProcessors.ColorLookup(all: ImageProcessors.ColorLookup.table { $0 })
        #expect(try identity.process(input).rgbaPixels() == before)
        // Tables of the wrong size are refused, naming the processor.
        #expect(throws: OspreyError.self) { try ImageProcessors.ColorLookup(red: [1], green: [], blue: []).process(input) }
    }

    @Test func equalizeStretchesEachChannelFromItsDarkestToItsBrightestValue() throws {
        // Red: half 10, a quarter 20, a quarter 30. Green: one value only (kept). Blue: 0 or 255.
        let input = try Self.image(width: 4, height: 4) { x, y in
            let red: UInt8 = y < 2 ? 10 : (x < 2 ? 20 : 30)
            return [red, 77, x == 0 ? 0 : 255, 200]
        }
        let out = try ImageProcessors.Equalize().process(input).rgbaPixels()
        func at(_ x: Int, _ y: Int) -> [UInt8] { Array(out[((y * 4 + x) * 4)..<((y * 4 + x) * 4 + 4)]) }
        // 255 * (cdf - cdf(min)) / (pixels - cdf(min)): 10 -> 0, 20 -> 255 * 4 / 8 = 127, 30 -> 255.
        #expect(at(0, 0) == [0, 77, 0, 200])
        #expect(at(1, 2) == [127, 77, 255, 200])
        #expect(at(3, 3) == [255, 77, 255, 200])
        #expect(ImageProcessors.Equalize.table([0, 3, 0, 1] + [Int](repeating: 0, count: 252))[1...3] == [0, 0, 255])
        // An animation keeps its frames.
        let animated = try TestData.image("no_time_for_that_tiny.gif")
        #expect(try ImageProcessors.Equalize().process(animated).frameCount == animated.frameCount)
    }

    /// thumbor's convolution, as its C filter computes it: every band, edges repeated, the sum
    /// truncated then clamped.
    static func reference(_ pixels: [UInt8], width: Int, height: Int, kernel: [Double], columns: Int, normalize: Bool) -> [UInt8] {
        let sum = kernel.reduce(0, +)
        let k = normalize && sum != 0 ? kernel.map { $0 / sum } : kernel
        let rows = kernel.count / columns
        var out = pixels
        for y in 0..<height {
            for x in 0..<width {
                for band in 0..<4 {
                    var total = 0.0
                    for ky in 0..<rows {
                        for kx in 0..<columns {
                            let sx = min(max(x + kx - columns / 2, 0), width - 1), sy = min(max(y + ky - rows / 2, 0), height - 1)
                            total += Double(pixels[(sy * width + sx) * 4 + band]) * k[ky * columns + kx]
                        }
                    }
                    out[(y * width + x) * 4 + band] = UInt8(min(max(Int(total), 0), 255))
                }
            }
        }
        return out
    }

    @Test(arguments: [
        ([1.0, 2, 1, 2, 4, 2, 1, 2, 1], 3, true),  // thumbor's documented blur
        ([0.0, -1, 0, -1, 5, -1, 0, -1, 0], 3, false),  // sharpen, values past 0...255
        ([1.0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3], 5, true)  // asymmetric, 5 x 3: not flipped
    ])
    func convolutionMatchesThumborsArithmetic(kernel: [Double], columns: Int, normalize: Bool) throws {
        var generator = SystemRandomNumberGenerator()
        let width = 23, height = 17
        let pixels = (0..<(width * height * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let out = try ImageProcessors.Convolve(kernel: kernel, columns: columns, normalize: normalize)
            .process(try Image(rgba: pixels, width: width, height: height)).rgbaPixels()
        let expected = Self.reference(pixels, width: width, height: height, kernel: kernel, columns: columns, normalize: normalize)
        // libvips sums in single precision: a value on an integer boundary may land one below.
        let worst = zip(out, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1)
    }

    @Test func convolutionKernelsMustBeOddByOdd() throws {
        #expect(ImageProcessors.Convolve.problem(kernel: [1, 2, 1, 2, 4, 2, 1, 2, 1], columns: 3) == nil)
        #expect(ImageProcessors.Convolve.problem(kernel: [1, 1], columns: 2) != nil)
        #expect(ImageProcessors.Convolve.problem(kernel: [1, 1, 1, 1, 1, 1], columns: 3) != nil)
        #expect(ImageProcessors.Convolve.problem(kernel: [1, 1, 1], columns: 0) != nil)
        #expect(ImageProcessors.Convolve.problem(kernel: [Double](repeating: 1, count: 289), columns: 17) != nil)
        #expect(ImageProcessors.Convolve.problem(kernel: [.nan], columns: 1) != nil)
        let input = try Self.image(width: 3, height: 3) { _, _ in [1, 2, 3, 255] }
        #expect(throws: OspreyError.self) { try ImageProcessors.Convolve(kernel: [1, 1], columns: 2).process(input) }
        #expect(ImageProcessors.Convolve(kernel: [1, 2, 1], columns: 3, normalize: false).identifier == "convolve:1;2;1:3:raw")
    }

    @Test func noiseMovesEveryColourChannelOfAPixelByGlibcsRandomSequence() throws {
        let input = try Self.image(width: 16, height: 8) { x, _ in [128, 5, 250, UInt8(x * 10)] }
        let out = try ImageProcessors.Noise(amount: 30, seed: 7).process(input).rgbaPixels()
        #if canImport(Glibc)
            // thumbor: srandom(seed), then one random() per pixel, row by row.
            srandom(7)
            for i in stride(from: 0, to: out.count, by: 4) {
                let offset = random() % 30 - 15
                #expect(out[i] == UInt8(128 + offset))
                #expect(out[i + 1] == UInt8(max(0, 5 + offset)))
                #expect(out[i + 2] == UInt8(min(255, 250 + offset)))
                #expect(out[i + 3] == UInt8((i / 4 % 16) * 10))
            }
        #endif
        // The same seed gives the same image; another seed another one; amount 0 nothing.
        #expect(try ImageProcessors.Noise(amount: 30, seed: 7).process(input).rgbaPixels() == out)
        #expect(try ImageProcessors.Noise(amount: 30, seed: 8).process(input).rgbaPixels() != out)
        #expect(try ImageProcessors.Noise(amount: 0).process(input).rgbaPixels() == input.rgbaPixels())
        #expect(throws: OspreyError.self) { try ImageProcessors.Noise(amount: 101).process(input) }
        #expect(ImageProcessors.Noise(amount: 30, seed: 7).identifier == "noise:30:7")
        #expect(ImageProcessors.Noise(amount: 30).identifier == "noise:30")
    }

    @Test func saturationMovesChannelsAroundThePerceivedBrightness() throws {
        // p = √(0.299 · 100² + 0.587 · 150² + 0.114 · 200²) = 144.08; out = p + (x - p) · factor.
        let input = try Self.image(width: 2, height: 1) { x, _ in x == 0 ? [100, 150, 200, 90] : [7, 7, 7, 255] }
        let half = try ImageProcessors.Saturation(factor: 0.5).process(input).rgbaPixels()
        #expect(Array(half[0..<4]) == [122, 147, 172, 90])
        #expect(Array(half[4..<8]) == [7, 7, 7, 255])  // a grey pixel stays grey
        #expect(Array(try ImageProcessors.Saturation(factor: -1).process(input).rgbaPixels()[0..<3]) == [188, 138, 88])
        #expect(Array(try ImageProcessors.Saturation(factor: 0).process(input).rgbaPixels()[0..<3]) == [144, 144, 144])
        #expect(try ImageProcessors.Saturation(factor: 1).process(input).rgbaPixels() == input.rgbaPixels())
        #expect(throws: OspreyError.self) { try ImageProcessors.Saturation(factor: .infinity).process(input) }
    }

    @Test func theSpecGrammarNamesTheNewSteps() throws {
        for spec in [
            "saturation:0.5", "saturation:-1", "pixelate:8", "equalize", "convolve:1;2;1;2;4;2;1;2;1:3", "convolve:0;-1;0;-1;5;-1;0;-1;0:3:raw",
            "noise:20", "noise:20:9"
        ] {
            #expect(try ProcessingSpec(parsing: spec).processor.identifier == spec)
        }
        for bad in ["equalize:1", "convolve:1;1:2", "convolve:1;x;1:3", "convolve:1;1;1:3:sideways", "noise:101", "noise:5:-1"] {
            #expect(throws: OspreyError.self, "\(bad)") { try ProcessingSpec(parsing: bad) }
        }
    }
}
