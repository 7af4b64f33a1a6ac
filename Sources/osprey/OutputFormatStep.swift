import Osprey

/// The spec's `format:F[:Q]` as the last step of the CLI's processor chain.
///
/// Its identifier (`format:F:Q`) is part of the processed image's cache key, so the disk cache holds
/// each output encoding under its own key: the stored bytes are the file `--out` writes, and a
/// result made for JPEG (flattened) is never served to a request for PNG of the same chain. It
/// flattens alpha onto white when `F` has none (JPEG), as ``ImageEncoder`` would, so the image
/// cached in memory is the one that gets encoded.
struct OutputFormatStep: ImageProcessing {
    /// The output format.
    let format: ImageFormat
    /// The output quality, 1...100 (the CLI's default 80).
    let quality: Int

    var identifier: String { "format:\(format.rawValue):\(quality)" }

    func process(_ image: Image) throws(OspreyError) -> Image {
        guard image.hasAlpha, !format.holdsAlpha else { return image }
        return try ImageProcessors.Pad().process(image)
    }
}
