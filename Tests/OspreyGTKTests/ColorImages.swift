import Foundation
import Osprey
import OspreyTestSupport

/// The GTK tests' images: solid-colour 4:3 PNGs, one colour per item, served by a
/// ``LoopbackOrigin`` as `/color/<item>.png` and (once the test opens gate `held`) `/held/<item>.png`.
enum ColorImages {
    /// The colour of item `item`: 512 colours 32 levels apart in each channel.
    static func color(_ item: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        (UInt8(16 + (item % 8) * 32), UInt8(16 + (item / 8 % 8) * 32), UInt8(16 + (item / 64 % 8) * 32))
    }

    /// A 40×30 PNG of one colour.
    static func png(red: UInt8, green: UInt8, blue: UInt8) throws -> Data {
        let pixels: [UInt8] = (0..<(40 * 30)).flatMap { _ -> [UInt8] in [red, green, blue, 255] }
        return try Image(rgba: pixels, width: 40, height: 30).encoded(as: .png)
    }

    /// The item of a `/color/<item>.png` or `/held/<item>.png` path.
    static func item(_ path: String) -> Int? {
        for prefix in ["/color/", "/held/"] where path.hasPrefix(prefix) && path.hasSuffix(".png") {
            return Int(path.dropFirst(prefix.count).dropLast(".png".count))
        }
        return nil
    }

    /// Starts a loopback origin that serves the colour images.
    static func origin() async throws -> LoopbackOrigin {
        let origin = try await LoopbackOrigin.start()
        origin.setGenerator { path in
            guard let number = ColorImages.item(path) else { return nil }
            let rgb = ColorImages.color(number)
            return try? ColorImages.png(red: rgb.red, green: rgb.green, blue: rgb.blue)
        }
        return origin
    }
}

extension LoopbackOrigin {
    /// The URL of item `item`'s colour image.
    func itemURL(_ item: Int) -> URL { url("/color/\(item).png") }

    /// The items of the `/held/` requests, in the order they arrived.
    var heldOrder: [Int] { snapshot.log.filter { $0.hasPrefix("/held/") }.compactMap(ColorImages.item) }
}
