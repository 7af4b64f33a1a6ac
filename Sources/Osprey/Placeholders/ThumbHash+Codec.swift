import Foundation

/// The ThumbHash math, written from the algorithm of evanw/thumbhash (its JavaScript reference):
/// the image in an LPQA colour space (luminance, yellow-blue, red-green, alpha), each channel
/// reduced to a few DCT coefficients, quantised to 4 bits each.
///
/// Every expression keeps the reference's order of double-precision operations, so that hashes
/// come out byte for byte the same and decoded pixels the same as the reference's.
extension ThumbHash {
    /// The reference's `rgbaToThumbHash`. `rgba` has `width * height * 4` bytes and both sides are
    /// in 1...100 (checked by the callers).
    static func encode(rgba: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        let count = w * h
        // The average colour, weighted by alpha.
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for i in 0..<count {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            avgR += alpha / 255 * Double(rgba[j])
            avgG += alpha / 255 * Double(rgba[j + 1])
            avgB += alpha / 255 * Double(rgba[j + 2])
            avgA += alpha
        }
        if avgA != 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(count)
        let lLimit = hasAlpha ? 5 : 7  // fewer luminance bits when there is alpha
        let lx = max(1, Int(jsRound(Double(lLimit * w) / Double(max(w, h)))))
        let ly = max(1, Int(jsRound(Double(lLimit * h) / Double(max(w, h)))))

        // RGBA to LPQA, composited atop the average colour.
        var l = [Double](repeating: 0, count: count)
        var p = l
        var q = l
        var a = l
        for i in 0..<count {
            let j = i * 4
            let alpha = Double(rgba[j + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Double(rgba[j])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(rgba[j + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(rgba[j + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        let lChannel = encodeChannel(l, nx: max(3, lx), ny: max(3, ly), width: w, height: h)
        let pChannel = encodeChannel(p, nx: 3, ny: 3, width: w, height: h)
        let qChannel = encodeChannel(q, nx: 3, ny: 3, width: w, height: h)
        let aChannel = hasAlpha ? encodeChannel(a, nx: 5, ny: 5, width: w, height: h) : nil

        // The constants.
        let isLandscape = w > h
        let header24 =
            Int(jsRound(63 * lChannel.dc)) | Int(jsRound(31.5 + 31.5 * pChannel.dc)) << 6
            | Int(jsRound(31.5 + 31.5 * qChannel.dc)) << 12 | Int(jsRound(31 * lChannel.scale)) << 18
            | (hasAlpha ? 1 << 23 : 0)
        let header16 =
            (isLandscape ? ly : lx) | Int(jsRound(63 * pChannel.scale)) << 3 | Int(jsRound(63 * qChannel.scale)) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [Int] = [header24 & 255, (header24 >> 8) & 255, header24 >> 16, header16 & 255, header16 >> 8]
        if let aChannel {
            hash.append(Int(jsRound(15 * aChannel.dc)) | Int(jsRound(15 * aChannel.scale)) << 4)
        }

        // The varying factors, two per byte, low nibble first.
        var acIndex = 0
        for channel in [lChannel, pChannel, qChannel] + (aChannel.map { [$0] } ?? []) {
            for f in channel.ac {
                let nibble = Int(jsRound(15 * f))
                if acIndex & 1 == 0 { hash.append(nibble) } else { hash[hash.count - 1] |= nibble << 4 }
                acIndex += 1
            }
        }
        return hash.map { UInt8(truncatingIfNeeded: $0) }
    }

    /// One channel's DCT: the constant term, the varying terms normalised into 0...1, and their scale.
    private static func encodeChannel(
        _ channel: [Double], nx: Int, ny: Int, width w: Int, height h: Int
    ) -> (dc: Double, ac: [Double], scale: Double) {
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        var fx = [Double](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                var f = 0.0
                for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                for y in 0..<h {
                    let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                    for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 {
            for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
        }
        return (dc, ac, scale)
    }

    /// The reference's `thumbHashToRGBA`: the pixels of the rendered placeholder, at most 32 on
    /// the longer side. `bytes` was checked by ``layoutProblem(_:)``.
    func decodeRGBA() -> (width: Int, height: Int, rgba: [UInt8]) {
        let header24 = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
        let header16 = Int(bytes[3]) | Int(bytes[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double((header24 >> 6) & 63) / 31.5 - 1
        let qDC = Double((header24 >> 12) & 63) / 31.5 - 1
        let lScale = Double((header24 >> 18) & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double((header16 >> 3) & 63) / 63
        let qScale = Double((header16 >> 9) & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        let aDC = hasAlpha ? Double(bytes[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(bytes[5] >> 4) / 15 : 0

        // The varying factors (saturation boosted by 1.25 to make up for quantisation).
        var acIndex = 0
        let acStart = hasAlpha ? 6 : 5
        func decodeChannel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let nibble = Int(bytes[acStart + (acIndex >> 1)] >> ((acIndex & 1) << 2)) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = decodeChannel(lx, ly, lScale)
        let pAC = decodeChannel(3, 3, pScale * 1.25)
        let qAC = decodeChannel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? decodeChannel(5, 5, aScale) : []

        let (w, h) = decodedSize
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        var fx = [Double](repeating: 0, count: max(lx, 5))
        var fy = [Double](repeating: 0, count: max(ly, 5))
        var i = 0
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC, p = pDC, q = qDC, a = aDC
                for cx in 0..<max(lx, hasAlpha ? 5 : 3) { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                for cy in 0..<max(ly, hasAlpha ? 5 : 3) { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }
                var j = 0
                for cy in 0..<ly {
                    let fy2 = fy[cy] * 2
                    var cx = cy > 0 ? 0 : 1
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        cx += 1
                        j += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    let fy2 = fy[cy] * 2
                    for cx in (cy > 0 ? 0 : 1)..<(3 - cy) {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        let fy2 = fy[cy] * 2
                        for cx in (cy > 0 ? 0 : 1)..<(5 - cy) {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                        }
                    }
                }
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                // A Uint8Array store in the reference: clamped here, then truncated.
                rgba[i] = Self.byte(r)
                rgba[i + 1] = Self.byte(g)
                rgba[i + 2] = Self.byte(b)
                rgba[i + 3] = Self.byte(a)
                i += 4
            }
        }
        return (w, h, rgba)
    }

    /// `max(0, 255 * min(1, value))` stored into a byte (truncated), as the reference stores it.
    private static func byte(_ value: Double) -> UInt8 {
        let scaled = max(0, 255 * min(1, value))
        return scaled.isNaN ? 0 : UInt8(scaled)
    }
}
