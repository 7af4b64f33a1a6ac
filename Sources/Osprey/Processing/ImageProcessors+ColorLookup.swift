import COspreyVips
import Crypto

extension ImageProcessors {
    /// Maps each colour channel through a 256-entry table (alpha kept): `red[r]`, `green[g]`,
    /// `blue[b]`. Channel offsets, blends towards a colour and tone curves (thumbor's `rgb`,
    /// `colorize` and `curve` filters) are all such tables. Identifier `lut:` followed by the
    /// first 16 hex digits of the tables' SHA-256. Keeps animation frames.
    package struct ColorLookup: FrameProcessor {
        /// The table of the red channel, 256 entries.
        package let red: [UInt8]
        /// The table of the green channel, 256 entries.
        package let green: [UInt8]
        /// The table of the blue channel, 256 entries.
        package let blue: [UInt8]

        /// A lookup through `red`, `green` and `blue` (256 entries each; other sizes fail when the
        /// processor runs, with `invalidArgument`).
        package init(red: [UInt8], green: [UInt8], blue: [UInt8]) {
            self.red = red
            self.green = green
            self.blue = blue
            identifier =
                "lut:" + SHA256.hash(data: red + green + blue).withUnsafeBytes { Hex.lowercase(UnsafeRawBufferPointer(rebasing: $0.prefix(8))) }
        }

        /// The same table for every channel.
        package init(all table: [UInt8]) {
            self.init(red: table, green: table, blue: table)
        }

        /// The table of `transform` applied to each value 0...255, clamped to 0...255.
        package static func table(_ transform: (Int) -> Int) -> [UInt8] {
            (0...255).map { UInt8(clamping: transform($0)) }
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package let identifier: String

        func validate(for image: Image) throws(OspreyError) {
            guard red.count == 256, green.count == 256, blue.count == 256 else {
                throw invalid("tables have \(red.count), \(green.count) and \(blue.count) entries, not 256 each")
            }
        }

        func keepsFrame(width: Int, height: Int) -> Bool {
            let identity = Self.table { $0 }
            return red == identity && green == identity && blue == identity
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            // One 256 x 1 image of three bands, interleaved as libvips stores pixels.
            var interleaved = [UInt8](repeating: 0, count: 768)
            for i in 0..<256 { (interleaved[3 * i], interleaved[3 * i + 1], interleaved[3 * i + 2]) = (red[i], green[i], blue[i]) }
            let lut = try VipsImageRef.lookupTable(interleaved, bands: 3)
            return try frame.splittingAlpha { (colour) throws(VipsFailure) in
                try colour.apply { osprey_maplut($0, lut.pointer, &$1) }
            }
        }
    }
}
