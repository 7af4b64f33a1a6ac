import Osprey

/// The per-channel tables of thumbor's colour filters, computed as thumbor's C filters compute
/// each pixel (integer arithmetic, truncation and clamping included), so that one
/// ``ImageProcessors/ColorLookup`` gives thumbor's pixels.
enum ThumborColorTables {
    /// `rgb(r,g,b)`: each channel plus `255 * percent / 100` (integer division), clamped.
    static func rgb(red: Int, green: Int, blue: Int) -> ImageProcessors.ColorLookup {
        func offset(_ percent: Int) -> [UInt8] { ImageProcessors.ColorLookup.table { $0 + 255 * percent / 100 } }
        return ImageProcessors.ColorLookup(red: offset(red), green: offset(green), blue: offset(blue))
    }

    /// `brightness(v)`: each channel plus `255 * v / 100` (integer division), clamped.
    static func brightness(_ amount: Int) -> ImageProcessors.ColorLookup {
        ImageProcessors.ColorLookup(all: ImageProcessors.ColorLookup.table { $0 + 255 * amount / 100 })
    }

    /// `contrast(v)`: each channel's distance from 128 times `(v + 100)² / 100` percent, in
    /// integer arithmetic, clamped: the factor grows with the square of `1 + v / 100`.
    static func contrast(_ amount: Int) -> ImageProcessors.ColorLookup {
        let factor = (amount + 100) * (amount + 100) / 100
        return ImageProcessors.ColorLookup(all: ImageProcessors.ColorLookup.table { factor * ($0 - 128) / 100 + 128 })
    }

    /// `colorize(r%,g%,b%,RRGGBB)`: each channel blended towards the fill's by its percentage,
    /// `(x * (100 - p) + fill * p) / 100` truncated, clamped.
    static func colorize(red: Int, green: Int, blue: Int, fill: RGBAColor) -> ImageProcessors.ColorLookup {
        func blend(_ percent: Int, _ target: UInt8) -> [UInt8] {
            ImageProcessors.ColorLookup.table { Int((Double($0) * Double(100 - percent) + Double(target) * Double(percent)) / 100) }
        }
        return ImageProcessors.ColorLookup(red: blend(red, fill.red), green: blend(green, fill.green), blue: blend(blue, fill.blue))
    }

    /// `curve(all, r, g, b)`: each channel through its own curve, then through `all`'s. A curve is
    /// a list of points `(x, y)` in 0...255 with increasing `x`, joined by a natural cubic spline
    /// (thumbor's `cubic_spline_interpolation`): flat at the first point's `y` before it and at
    /// the last point's after it.
    static func curve(all: [(Int, Int)], red: [(Int, Int)], green: [(Int, Int)], blue: [(Int, Int)]) -> ImageProcessors.ColorLookup {
        let a = spline(all), r = spline(red), g = spline(green), b = spline(blue)
        return ImageProcessors.ColorLookup(red: r.map { a[Int($0)] }, green: g.map { a[Int($0)] }, blue: b.map { a[Int($0)] })
    }

    /// The four curves of `curve(…)`'s arguments (all the filter's text between its parentheses,
    /// percent-encoded or not: clients may send `[` and `]` as `%5B` and `%5D`), or `nil` unless
    /// there are exactly four valid ones.
    static func curves(_ text: String) -> [[(Int, Int)]]? {
        var lists: [[(Int, Int)]] = []
        var rest = Substring((text.removingPercentEncoding ?? text).filter { !$0.isWhitespace })
        while !rest.isEmpty {
            guard let close = rest.firstIndex(of: "]"), let list = points(String(rest[...close])) else { return nil }
            lists.append(list)
            rest = rest[rest.index(after: close)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        return lists.count == 4 ? lists : nil
    }

    /// Parses one curve argument, `[(x,y),(x,y),…]`; `nil` unless it has at least one point, every
    /// value is in 0...255 and `x` increases.
    static func points(_ text: String) -> [(Int, Int)]? {
        let compact = text.filter { !$0.isWhitespace }
        guard compact.hasPrefix("["), compact.hasSuffix("]") else { return nil }
        let body = compact.dropFirst().dropLast()
        guard body.hasPrefix("("), body.hasSuffix(")") || body.hasSuffix("),") else { return nil }
        var points: [(Int, Int)] = []
        for pair in body.split(separator: ")", omittingEmptySubsequences: true) {
            let trimmed = pair.drop { $0 == "," }
            guard trimmed.hasPrefix("(") else { return nil }
            let values = trimmed.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            guard values.count == 2, let x = Int(values[0]), let y = Int(values[1]), (0...255).contains(x), (0...255).contains(y) else { return nil }
            if let last = points.last, x <= last.0 { return nil }
            points.append((x, y))
        }
        return points.isEmpty ? nil : points
    }

    /// 256 values of the natural cubic spline through `points`.
    private static func spline(_ points: [(Int, Int)]) -> [UInt8] {
        let n = points.count
        let x = points.map { Double($0.0) }, y = points.map { Double($0.1) }
        // Second derivatives: a tridiagonal system, ends fixed at 0 (thumbor's elimination order).
        var lower = [Double](repeating: 0, count: n), diagonal = [Double](repeating: 0, count: n)
        var upper = [Double](repeating: 0, count: n), rhs = [Double](repeating: 0, count: n)
        diagonal[0] = 1
        diagonal[n - 1] = 1
        if n > 2 {
            for i in 1..<(n - 1) {
                lower[i] = (x[i] - x[i - 1]) / 6
                diagonal[i] = (x[i + 1] - x[i - 1]) / 3
                upper[i] = (x[i + 1] - x[i]) / 6
                rhs[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1])
            }
        }
        for i in stride(from: 1, to: n, by: 1) {
            let k = lower[i] / diagonal[i - 1]
            diagonal[i] -= k * upper[i - 1]
            lower[i] = 0
            rhs[i] -= k * rhs[i - 1]
        }
        for i in stride(from: n - 2, through: 0, by: -1) {
            let k = upper[i] / diagonal[i + 1]
            diagonal[i] -= k * lower[i + 1]
            upper[i] = 0
            rhs[i] -= k * rhs[i + 1]
        }
        let second = (0..<n).map { rhs[$0] / diagonal[$0] }
        var table = [UInt8](repeating: UInt8(points[0].1), count: 256)
        for i in 0..<(n - 1) {
            let h = x[i + 1] - x[i]
            for value in points[i].0..<points[i + 1].0 {
                let t = (Double(value) - x[i]) / h, a = 1 - t, b = t
                let v = a * y[i] + b * y[i + 1] + (h * h / 6) * ((a * a * a - a) * second[i] + (b * b * b - b) * second[i + 1])
                table[value] = UInt8(min(255, max(0, v.rounded())))
            }
        }
        for value in points[n - 1].0...255 { table[value] = UInt8(points[n - 1].1) }
        return table
    }
}
