import Osprey

/// Margins around the image (imgproxy's `pd`), of `background` (transparent by default: the
/// encoder flattens it onto white for JPEG). Identifier `padding:T:R:B:L:RRGGBBAA`. Keeps
/// animation frames (the pads do).
public struct PaddingStep: ImageProcessing, Hashable {
    /// Pixels above the image. Default 0.
    public var top = 0
    /// Pixels right of the image. Default 0.
    public var right = 0
    /// Pixels below the image. Default 0.
    public var bottom = 0
    /// Pixels left of the image. Default 0.
    public var left = 0
    /// What the margins are made of. Default transparent.
    public var background = RGBAColor.clear

    /// Margins of `top`, `right`, `bottom`, `left` pixels (default 0) of `background` (default transparent).
    public init(top: Int = 0, right: Int = 0, bottom: Int = 0, left: Int = 0, background: RGBAColor = .clear) {
        (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        self.background = background
    }

    /// The stable identifier; see ``ImageProcessing/identifier``.
    public var identifier: String { "padding:\(top):\(right):\(bottom):\(left):\(background.hex)" }

    /// `image` with the margins: first the top and left ones (the image at the bottom right of
    /// a canvas grown by them), then the bottom and right ones.
    public func process(_ image: Image) throws(OspreyError) -> Image {
        guard top > 0 || right > 0 || bottom > 0 || left > 0 else { return image }
        var current = image
        if top > 0 || left > 0 {
            current = try ImageProcessors.Pad(
                width: current.width + left, height: current.height + top, background: background, gravity: .bottomRight
            ).process(current)
        }
        if bottom > 0 || right > 0 {
            current = try ImageProcessors.Pad(
                width: current.width + right, height: current.height + bottom, background: background, gravity: .topLeft
            ).process(current)
        }
        return current
    }
}
