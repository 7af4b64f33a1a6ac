/// What a target shows until its image arrives: an image, or a placeholder hash decoded to the
/// target's size (Kingfisher's and SDWebImage's placeholder, plus the hashes backends store).
///
/// ```swift
/// let placeholder = Placeholder.thumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j2w")
/// let shown = try await placeholder.image(width: 320, height: 240)   // off the caller's thread
/// ```
public enum Placeholder: Sendable {
    /// An image, shown as it is (scaled to the requested size).
    case image(Image)
    /// A ``ThumbHash`` in its base64 string form; it carries its own aspect ratio.
    case thumbHash(String)
    /// A ``BlurHash`` string with the width and height of the image it stands for (only their
    /// ratio matters: a BlurHash holds none), and its `punch` (default 1; see
    /// ``BlurHash/image(width:height:punch:)``).
    case blurHash(String, width: Int, height: Int, punch: Double = 1)

    /// The largest side ``image(width:height:contentMode:)`` renders: 8192 pixels.
    package static let maxSide = 8192

    /// The side a hash is rendered at before it is scaled to the requested size: 32 pixels on the
    /// longer side, as ThumbHash's reference renders (the hashes hold no more detail than that).
    static let renderSide = 32

    /// Decodes the placeholder and scales it to `width` x `height` (each 1...8192) with
    /// `contentMode` (default ``ImageProcessors/ContentMode/fit``: inside the box, keeping the
    /// placeholder's aspect ratio), on a background queue, off the main thread and Swift's
    /// cooperative pool. Throws ``OspreyError/DecodingReason/invalidPlaceholderHash(algorithm:hash:message:)``
    /// for a malformed hash and ``OspreyError/ProcessingReason/invalidArgument(processor:message:)``
    /// for a size out of range.
    public func image(
        width: Int, height: Int, contentMode: ImageProcessors.ContentMode = .fit
    ) async throws(OspreyError) -> Image {
        try await PlaceholderRaster.run { () throws(OspreyError) in
            try decoded(width: width, height: height, contentMode: contentMode)
        }
    }

    /// ``image(width:height:contentMode:)`` on the calling thread.
    package func decoded(
        width: Int, height: Int, contentMode: ImageProcessors.ContentMode = .fit
    ) throws(OspreyError) -> Image {
        guard (1...Self.maxSide).contains(width), (1...Self.maxSide).contains(height) else {
            throw .processing(
                .invalidArgument(processor: "placeholder", message: "size \(width)x\(height) must be 1...\(Self.maxSide) pixels on each side"))
        }
        switch self {
        case .image(let image):
            return try ImageProcessors.Resize(width: width, height: height, contentMode: contentMode).process(image)
        case .thumbHash(let string):
            let small = try ThumbHash(string: string).image()
            return try ImageProcessors.Resize(width: width, height: height, contentMode: contentMode).process(small)
        case .blurHash(let string, let originalWidth, let originalHeight, let punch):
            guard originalWidth > 0, originalHeight > 0 else {
                throw .processing(
                    .invalidArgument(
                        processor: "placeholder", message: "BlurHash image size \(originalWidth)x\(originalHeight) must be positive"))
            }
            let hash = try BlurHash(string: string)
            let ratio = Double(originalWidth) / Double(originalHeight)
            let side = Double(Self.renderSide)
            let small = try hash.image(
                width: ratio >= 1 ? Self.renderSide : max(1, Int((side * ratio).rounded())),
                height: ratio >= 1 ? max(1, Int((side / ratio).rounded())) : Self.renderSide, punch: punch)
            guard contentMode == .fit else {
                return try ImageProcessors.Resize(width: width, height: height, contentMode: contentMode).process(small)
            }
            // Fitted from the given ratio, not the small render's (rounded to whole pixels).
            let scale = min(Double(width) / Double(originalWidth), Double(height) / Double(originalHeight))
            let fitted = (
                width: min(width, max(1, Int((Double(originalWidth) * scale).rounded()))),
                height: min(height, max(1, Int((Double(originalHeight) * scale).rounded())))
            )
            return try ImageProcessors.Resize(width: fitted.width, height: fitted.height, contentMode: .stretch).process(small)
        }
    }
}
