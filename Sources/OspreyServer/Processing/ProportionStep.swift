import Osprey

/// Scales the image by a factor, both axes alike (thumbor's `proportion` filter, run where it
/// appears among the filters, after the resize). Identifier `proportion:F`. Keeps animation frames
/// (the resize does).
public struct ProportionStep: ImageProcessing, Hashable {
    /// The factor, in (0, 1]; thumbor ignores any other.
    public var factor: Double

    /// A step scaling by `factor`.
    public init(factor: Double) {
        self.factor = factor
    }

    /// The stable identifier; see ``ImageProcessing/identifier``.
    public var identifier: String { "proportion:\(identifierNumber(factor))" }

    /// `image` scaled by ``factor`` (each side rounded, at least 1 pixel); unchanged outside (0, 1).
    public func process(_ image: Image) throws(OspreyError) -> Image {
        guard factor > 0, factor < 1 else { return image }
        let width = max(1, Int((Double(image.width) * factor).rounded()))
        let height = max(1, Int((Double(image.height) * factor).rounded()))
        guard width != image.width || height != image.height else { return image }
        return try ImageProcessors.Resize(width: width, height: height, contentMode: .stretch).process(image)
    }
}
