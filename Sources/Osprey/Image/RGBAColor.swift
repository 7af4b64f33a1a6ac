/// An sRGB colour with alpha, 8 bits per channel.
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    /// Red, 0...255.
    public var red: UInt8
    /// Green, 0...255.
    public var green: UInt8
    /// Blue, 0...255.
    public var blue: UInt8
    /// Alpha, 0 (transparent) ... 255 (opaque, the default).
    public var alpha: UInt8

    /// A colour from its channels; `alpha` defaults to 255 (opaque).
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `RRGGBB` or `RRGGBBAA` hex, with or without a leading `#`; `nil` otherwise.
    public init?(hex: String) {
        var text = Substring(hex)
        if text.hasPrefix("#") { text = text.dropFirst() }
        guard text.count == 6 || text.count == 8, let value = UInt32(text, radix: 16) else { return nil }
        if text.count == 6 {
            self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
        } else {
            self.init(red: UInt8(value >> 24), green: UInt8(value >> 16 & 0xFF), blue: UInt8(value >> 8 & 0xFF), alpha: UInt8(value & 0xFF))
        }
    }

    /// Opaque white.
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Fully transparent black.
    public static let clear = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// `RRGGBB`, or `RRGGBBAA` when not opaque: the form processor identifiers use.
    public var hex: String {
        let rgb = [red, green, blue].map { byteHex($0) }.joined()
        return alpha == 255 ? rgb : rgb + byteHex(alpha)
    }

    public var description: String { "#" + hex }

    var rgbDoubles: [Double] { [Double(red), Double(green), Double(blue)] }
    var rgbaDoubles: [Double] { [Double(red), Double(green), Double(blue), Double(alpha)] }
}

private func byteHex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
