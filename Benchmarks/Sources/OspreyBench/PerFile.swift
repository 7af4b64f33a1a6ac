import Foundation
import Osprey

/// `OspreyBench perfile DIR...`: for every image, the median wall and process CPU time of the
/// end-to-end job's image work (decode with the `thumbnail:256` chain, then JPEG q80), one image at a
/// time on one thread: where the per-image time of scenarios 6 and 7 goes. `PERFILE_STOCK=0` leaves
/// the stock libvips column out (its thread pool's wake-ups otherwise land in the process CPU).
func perFile(directories: [String]) throws {
    let decoder = ImageDecoder(options: e2eDecoding)
    let rounds = envInt("PERFILE_ROUNDS", 15)
    let withStock = envInt("PERFILE_STOCK", 1) != 0
    print("file | decode wall ms | decode cpu ms | encode wall ms | encode cpu ms | stock libvips thumbnail+jpegsave wall ms")
    var totals = (0.0, 0.0, 0.0, 0.0), stockTotal = 0.0
    for directory in directories {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() where !name.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                let first = try? decoder.decode(data, processedBy: thumbnailChain)
            else { continue }
            blackHole(try first.encoded(as: .jpeg, quality: 80))
            var dw: [Double] = [], dc: [Double] = [], ew: [Double] = [], ec: [Double] = [], sw: [Double] = []
            for _ in 0..<rounds {
                let (w0, c0) = (wallNow(), processCPU())
                let image = try decoder.decode(data, processedBy: thumbnailChain)
                let (w1, c1) = (wallNow(), processCPU())
                blackHole(try image.encoded(as: .jpeg, quality: 80))
                let (w2, c2) = (wallNow(), processCPU())
                dw.append(w1 - w0)
                dc.append(c1 - c0)
                ew.append(w2 - w1)
                ec.append(c2 - c1)
                let stocked = withStock && stockThumbnailJPEG(data) != nil
                sw.append(stocked ? wallNow() - w2 : .nan)
            }
            let stock = sw.sorted()[sw.count / 2] * 1e3
            if !stock.isNaN { stockTotal += stock }
            let m = [dw, dc, ew, ec].map { $0.sorted()[$0.count / 2] * 1e3 }
            totals = (totals.0 + m[0], totals.1 + m[1], totals.2 + m[2], totals.3 + m[3])
            print(String(format: "%@ | %.2f | %.2f | %.2f | %.2f | %.2f", name, m[0], m[1], m[2], m[3], stock))
        }
    }
    print(String(format: "total | %.2f | %.2f | %.2f | %.2f | %.2f", totals.0, totals.1, totals.2, totals.3, stockTotal))
}

private func wallNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
