import COspreyVips

extension ImageProcessors {
    /// Which corners `ImageProcessors.RoundCorner` rounds.
    public struct RectCorner: OptionSet, Sendable, Hashable {
        /// The corner bits.
        public let rawValue: Int
        /// A set of corners from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The topLeft corner.
        public static let topLeft = RectCorner(rawValue: 1)
        /// The topRight corner.
        public static let topRight = RectCorner(rawValue: 2)
        /// The bottomLeft corner.
        public static let bottomLeft = RectCorner(rawValue: 4)
        /// The bottomRight corner.
        public static let bottomRight = RectCorner(rawValue: 8)
        /// All four corners.
        public static let all: RectCorner = [.topLeft, .topRight, .bottomLeft, .bottomRight]

        /// `all`, or the corners as `tl+tr+bl+br` (those present), for identifiers.
        var token: String {
            if self == .all { return "all" }
            let names: [(RectCorner, String)] = [(.topLeft, "tl"), (.topRight, "tr"), (.bottomLeft, "bl"), (.bottomRight, "br")]
            return names.filter { contains($0.0) }.map(\.1).joined(separator: "+")
        }

        /// Parses `all` or `tl+tr+bl+br` (any subset, `+`-separated).
        init?(token: String) {
            if token == "all" {
                self = .all
                return
            }
            var corners: RectCorner = []
            for part in token.split(separator: "+") {
                switch part {
                case "tl": corners.insert(.topLeft)
                case "tr": corners.insert(.topRight)
                case "bl": corners.insert(.bottomLeft)
                case "br": corners.insert(.bottomRight)
                default: return nil
                }
            }
            guard !corners.isEmpty else { return nil }
            self = corners
        }
    }

    /// Rounds corners with an antialiased edge. Without a background the corners become transparent
    /// (the output gains alpha); with one, they are filled with it. Identifier
    /// `round:R[:corners][:RRGGBB[AA]]`. Keeps animation frames.
    package struct RoundCorner: FrameProcessor {
        /// The corner radius in pixels (> 0), clipped to half the shorter side.
        package let radius: Int
        /// The corners to round. Default ``ImageProcessors/RectCorner/all``.
        package let corners: RectCorner
        /// The fill behind the rounded corners. Default `nil`: transparent.
        package let background: RGBAColor?

        /// Rounds `corners` (default all) with `radius`, over `background` (default transparent).
        package init(radius: Int, corners: RectCorner = .all, background: RGBAColor? = nil) {
            self.radius = radius
            self.corners = corners
            self.background = background
        }

        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        package var identifier: String {
            var id = "round:\(radius)"
            if corners != .all || background != nil { id += ":\(corners.token)" }
            if let background { id += ":\(background.hex)" }
            return id
        }

        func validate(for image: Image) throws(OspreyError) {
            guard radius > 0 else { throw invalid("radius \(radius) must be positive") }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let r = min(radius, min(frame.width, frame.height) / 2)
            guard r > 0 else { return frame }
            var mask = try VipsImageRef.constant(width: frame.width, height: frame.height, color: .white)
            mask = try mask.apply { osprey_extract_bands($0, 0, 1, &$1) }
            let placements: [(RectCorner, Int, Int)] = [
                (.topLeft, 0, 0), (.topRight, frame.width - r, 0),
                (.bottomLeft, 0, frame.height - r), (.bottomRight, frame.width - r, frame.height - r)
            ]
            for (corner, x, y) in placements where corners.contains(corner) {
                let tile = try VipsImageRef.mask(Self.cornerCoverage(radius: r, corner: corner), width: r, height: r)
                let base = mask
                mask = try VipsImageRef.make { osprey_insert(base.pointer, tile.pointer, Int32(x), Int32(y), &$0) }
            }
            let rgba = try frame.withAlpha()
            let colour = try rgba.withoutAlpha()
            let alpha = try rgba.apply { osprey_extract_bands($0, 3, 1, &$1) }
            let maskImage = mask
            let scaled = try VipsImageRef.make { osprey_multiply(alpha.pointer, maskImage.pointer, &$0) }.linear(1.0 / 255.0, 0)
            let rounded = try VipsImageRef.make { osprey_bandjoin2(colour.pointer, scaled.pointer, &$0) }
            guard let background else { return rounded }
            let fill = try VipsImageRef.constant(width: frame.width, height: frame.height, color: background)
            let composed = try fill.composite(rounded, mode: VIPS_BLEND_MODE_OVER)
            return background.alpha == 255 ? try composed.withoutAlpha() : composed
        }

        /// Coverage (0...255) of an `radius` x `radius` corner tile, 4x4 supersampled for a smooth edge.
        static func cornerCoverage(radius r: Int, corner: RectCorner) -> [UInt8] {
            var tile = [UInt8](repeating: 255, count: r * r)
            let radius = Double(r)
            let samples = 4
            for row in 0..<r {
                for column in 0..<r {
                    var inside = 0
                    for sy in 0..<samples {
                        for sx in 0..<samples {
                            // Distance from the arc's centre, for the top-left tile (centre at r, r).
                            let px = Double(column) + (Double(sx) + 0.5) / Double(samples)
                            let py = Double(row) + (Double(sy) + 0.5) / Double(samples)
                            let dx = radius - px, dy = radius - py
                            if dx * dx + dy * dy <= radius * radius { inside += 1 }
                        }
                    }
                    let flippedColumn = corner == .topRight || corner == .bottomRight ? r - 1 - column : column
                    let flippedRow = corner == .bottomLeft || corner == .bottomRight ? r - 1 - row : row
                    tile[flippedRow * r + flippedColumn] = UInt8(inside * 255 / (samples * samples))
                }
            }
            return tile
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Rounds corners with an antialiased edge. Without a background the corners become transparent
    /// (the output gains alpha); with one, they are filled with it. Identifier
    /// `round:R[:corners][:RRGGBB[AA]]`. Keeps animation frames.
    ///
    /// The processor with `radius`, `corners` (default all), `background` (default transparent).
    public static func roundCorner(radius: Int, corners: ImageProcessors.RectCorner = .all, background: RGBAColor? = nil) -> Self {
        Self([ImageProcessors.RoundCorner(radius: radius, corners: corners, background: background)])
    }
}
