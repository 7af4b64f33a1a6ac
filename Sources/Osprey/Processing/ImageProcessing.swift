/// Turns one image into another, like Kingfisher's `ImageProcessor` and SDWebImage's transformers.
///
/// The ``identifier`` names the processor and its arguments; two processors with equal identifiers
/// must produce equal images, because a processed image is cached under "source key + identifier".
/// The built-in processors use the step syntax of ``ProcessingSpec`` as their identifier
/// (e.g. `resize:200x200:fill`), and a composition joins its parts with commas, so an identifier
/// parses back into the same processor.
public protocol ImageProcessing: Sendable {
    /// A stable string naming the processor and its arguments; `""` for the identity.
    var identifier: String { get }
    /// Returns the processed image. Errors are ``OspreyError/processing(_:)``.
    func process(_ image: Image) throws(OspreyError) -> Image
}

extension ImageProcessing {
    /// A processor that runs `self`, then `next`. Its identifier joins both with a comma.
    public func append(_ next: any ImageProcessing) -> ImageProcessors.Composition {
        ImageProcessors.Composition([self, next])
    }
}
