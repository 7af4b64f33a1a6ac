/// A 12 x 12 nine-patch as RGBA bytes: columns and rows 5...6 stretch, the content is padded by 2
/// on every side, and the inside is a red ring 2 pixels wide around a transparent middle.
public enum NinePatchFixture {
    public static let side = 12

    public static var rgba: [UInt8] {
        var pixels = [UInt8](repeating: 0, count: side * side * 4)
        func set(_ x: Int, _ y: Int, _ rgba: [UInt8]) { pixels.replaceSubrange(((y * side + x) * 4)..<((y * side + x) * 4 + 4), with: rgba) }
        let black: [UInt8] = [0, 0, 0, 255]
        for i in 5...6 {
            set(i, 0, black)
            set(0, i, black)
        }
        for i in 3...8 {
            set(i, side - 1, black)
            set(side - 1, i, black)
        }
        for y in 1...10 {
            for x in 1...10 where x <= 2 || x >= 9 || y <= 2 || y >= 9 { set(x, y, [255, 0, 0, 255]) }
        }
        return pixels
    }
}
