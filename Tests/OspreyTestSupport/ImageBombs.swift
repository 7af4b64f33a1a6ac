import Foundation

/// Decompression bombs for the tests that refuse them: small files whose headers declare far
/// more pixels than they hold.
public enum ImageBombs {
    /// The error when a JPEG has no frame header to patch.
    public struct NoFrameHeader: Error, CustomStringConvertible {
        public var description: String { "no SOF marker in the JPEG to patch" }
    }

    /// The test image hopper.jpg with its frame header (SOF0-2) patched to declare `width` x
    /// `height`: a bomb in a few KB.
    public static func jpeg(width: UInt16, height: UInt16) throws -> Data {
        var bytes = [UInt8](try FixtureImages.data("hopper.jpg"))
        var index = 2
        while index + 9 < bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if (0xC0...0xC2).contains(marker) {
                bytes[index + 5] = UInt8(height >> 8)
                bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8)
                bytes[index + 8] = UInt8(width & 0xFF)
                return Data(bytes)
            }
            index += 2 + length
        }
        throw NoFrameHeader()
    }
}
