import Foundation

/// The BlurHash math, written from woltapp/blurhash's algorithm description and its C and
/// TypeScript references: a DCT of the image in linear RGB, the first component stored as sRGB,
/// the others quantised to 19 levels per channel on a square-root scale.
///
/// The encoder sums rows outer and columns inner, as the C reference and the PyPI `blurhash`
/// package do, in double precision, so that component values round the same way.
extension BlurHash {
    /// A 1...9 by 1...9 component DCT of `rgba` (its RGB; alpha ignored), as a hash string.
    static func encode(rgba: [UInt8], width: Int, height: Int, componentsX: Int, componentsY: Int) -> String {
        let count = width * height
        var linear = [Double](repeating: 0, count: count * 3)
        for i in 0..<count {
            for channel in 0..<3 { linear[i * 3 + channel] = sRGBToLinear(Int(rgba[i * 4 + channel])) }
        }
        let w = Double(width)
        let h = Double(height)
        var components: [(Double, Double, Double)] = []
        var maximumAC = 0.0
        var cosX = [Double](repeating: 0, count: width)
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation = i == 0 && j == 0 ? 1.0 : 2.0
                for x in 0..<width { cosX[x] = cos(Double.pi * Double(i) * Double(x) / w) }
                var r = 0.0, g = 0.0, b = 0.0
                for y in 0..<height {
                    let cosY = cos(Double.pi * Double(j) * Double(y) / h)
                    for x in 0..<width {
                        let basis = normalisation * cosX[x] * cosY
                        let pixel = (y * width + x) * 3
                        r += basis * linear[pixel]
                        g += basis * linear[pixel + 1]
                        b += basis * linear[pixel + 2]
                    }
                }
                let scale = w * h
                components.append((r / scale, g / scale, b / scale))
                if i > 0 || j > 0 { maximumAC = max(maximumAC, abs(r / scale), abs(g / scale), abs(b / scale)) }
            }
        }

        let (dcR, dcG, dcB) = components[0]
        let dc = (linearToSRGB(dcR) << 16) + (linearToSRGB(dcG) << 8) + linearToSRGB(dcB)
        let quantisedMaximum = Int(max(0, min(82, (maximumAC * 166 - 0.5).rounded(.down))))
        let normaliser = Double(quantisedMaximum + 1) / 166
        func quantise(_ value: Double) -> Int {
            Int(max(0, min(18, (signPow(value / normaliser, 0.5) * 9 + 9.5).rounded(.down))))
        }

        var hash = Base83.encode(componentsX - 1 + (componentsY - 1) * 9, length: 1)
        hash += Base83.encode(quantisedMaximum, length: 1)
        hash += Base83.encode(dc, length: 4)
        for (r, g, b) in components.dropFirst() {
            hash += Base83.encode(quantise(r) * 19 * 19 + quantise(g) * 19 + quantise(b), length: 2)
        }
        return hash
    }

    /// The reference decoders' pixels at `width` x `height`: RGBA8 with alpha 255.
    func decodeRGBA(width: Int, height: Int, punch: Double) -> [UInt8] {
        let characters = Array(string.utf8)
        let maximumValue = Double(Base83.decode(characters[1..<2]) + 1) / 166 * punch
        var colours: [(Double, Double, Double)] = []
        let dc = Base83.decode(characters[2..<6])
        colours.append((Self.sRGBToLinear(dc >> 16), Self.sRGBToLinear((dc >> 8) & 255), Self.sRGBToLinear(dc & 255)))
        for component in 1..<(componentsX * componentsY) {
            let value = Base83.decode(characters[(4 + component * 2)..<(6 + component * 2)])
            func level(_ quantised: Int) -> Double { Self.signPow((Double(quantised) - 9) / 9, 2) * maximumValue }
            colours.append((level(value / (19 * 19)), level((value / 19) % 19), level(value % 19)))
        }

        let w = Double(width)
        let h = Double(height)
        var cosX = [Double](repeating: 0, count: width * componentsX)
        for x in 0..<width {
            for i in 0..<componentsX { cosX[x * componentsX + i] = cos(Double.pi * Double(x) * Double(i) / w) }
        }
        var cosY = [Double](repeating: 0, count: height * componentsY)
        for y in 0..<height {
            for j in 0..<componentsY { cosY[y * componentsY + j] = cos(Double.pi * Double(y) * Double(j) / h) }
        }
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                var r = 0.0, g = 0.0, b = 0.0
                for j in 0..<componentsY {
                    for i in 0..<componentsX {
                        let basis = cosX[x * componentsX + i] * cosY[y * componentsY + j]
                        let colour = colours[i + j * componentsX]
                        r += colour.0 * basis
                        g += colour.1 * basis
                        b += colour.2 * basis
                    }
                }
                let pixel = (y * width + x) * 4
                rgba[pixel] = UInt8(Self.linearToSRGB(r))
                rgba[pixel + 1] = UInt8(Self.linearToSRGB(g))
                rgba[pixel + 2] = UInt8(Self.linearToSRGB(b))
            }
        }
        return rgba
    }

    /// An sRGB byte value (0...255; larger values, which a hash's average colour can declare, go
    /// past 1 as in the references) in linear light.
    static func sRGBToLinear(_ value: Int) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear light, clamped into 0...1, as an sRGB byte value rounded half up.
    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        if v.isNaN { return 0 }
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    /// `value` raised to `exponent`, keeping its sign.
    static func signPow(_ value: Double, _ exponent: Double) -> Double {
        copysign(pow(abs(value), exponent), value)
    }
}
