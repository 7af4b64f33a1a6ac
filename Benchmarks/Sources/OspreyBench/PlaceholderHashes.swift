import Foundation
import Osprey

/// `OspreyBench placeholders DIR...`: for every image, the median wall time of making its
/// placeholder hashes from the file's bytes (`ThumbHash(imageData:)`, `BlurHash(imageData:)` at 4x3:
/// the small first-frame decode plus the DCT) against a full decode of the same bytes, one image
/// at a time on one thread; then the DCTs alone (from the 100 x 100 raster) and the renders
/// (hash to image). `PLACEHOLDER_ROUNDS` (default 15) rounds per figure.
func placeholderHashes(directories: [String]) throws {
    let rounds = envInt("PLACEHOLDER_ROUNDS", 15)
    func median(_ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for _ in 0..<rounds {
            let start = placeholderClock()
            try body()
            times.append(placeholderClock() - start)
        }
        return times.sorted()[times.count / 2] * 1e3
    }
    print("file | full decode ms | thumbhash ms | blurhash 4x3 ms | thumbhash / decode | blurhash / decode")
    var totals = (0.0, 0.0, 0.0)
    var small = (thumbDCT: [Double](), blurDCT: [Double](), thumbRender: [Double](), blurRender: [Double]())
    for directory in directories {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where !name.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name), (try? Image(data: data)) != nil else { continue }
            let decode = try median { blackHole(try Image(data: data)) }
            let thumb = try median { blackHole(try ThumbHash(imageData: data)) }
            let blur = try median { blackHole(try BlurHash(imageData: data)) }
            totals = (totals.0 + decode, totals.1 + thumb, totals.2 + blur)
            print(String(format: "%@ | %.2f | %.2f | %.2f | %.3f | %.3f", name, decode, thumb, blur, thumb / decode, blur / decode))

            let raster = try Image(data: data, options: DecodingOptions(thumbnail: .init(maxPixelSize: 100), firstFrameOnly: true))
            let rgba = try raster.rgbaPixels()
            let (width, height) = (raster.width, raster.height)
            let thumbHash = try ThumbHash(rgba: rgba, width: width, height: height)
            let blurHash = try BlurHash(rgba: rgba, width: width, height: height)
            small.thumbDCT.append(try median { blackHole(try ThumbHash(rgba: rgba, width: width, height: height)) })
            small.blurDCT.append(try median { blackHole(try BlurHash(rgba: rgba, width: width, height: height)) })
            small.thumbRender.append(try median { blackHole(try thumbHash.image()) })
            small.blurRender.append(try median { blackHole(try blurHash.image(width: 32, height: 32)) })
        }
    }
    print(
        String(
            format: "total | %.2f | %.2f | %.2f | %.3f | %.3f", totals.0, totals.1, totals.2, totals.1 / totals.0, totals.2 / totals.0))
    func middle(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(
        String(
            format:
                "median per image, from the 100x100 raster: ThumbHash DCT %.3f ms, BlurHash 4x3 DCT %.3f ms; render: ThumbHash %.3f ms, BlurHash 32x32 %.3f ms",
            middle(small.thumbDCT), middle(small.blurDCT), middle(small.thumbRender), middle(small.blurRender)))
}

/// Monotonic wall time in seconds.
private func placeholderClock() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
