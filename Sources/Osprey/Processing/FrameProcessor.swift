import COspreyVips

/// A built-in processor: a libvips transform applied to each frame, so animations keep their frames.
///
/// Frames are transformed lazily and materialised once at the end, so a ``ImageProcessors/Composition``
/// of built-in processors renders its pixels a single time.
protocol FrameProcessor: ImageProcessing {
    /// Checks arguments against the image before any pixel work; throws `invalidArgument`.
    func validate(for image: Image) throws(OspreyError)
    /// Transforms one frame (a still image, `frameWidth` x `frameHeight`).
    func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef
}

extension FrameProcessor {
    func validate(for image: Image) throws(OspreyError) {}

    /// Runs the processor; see ``ImageProcessing/process(_:)``.
    public func process(_ image: Image) throws(OspreyError) -> Image {
        try ImageProcessors.render(image, through: [self])
    }

    /// An `invalidArgument` error naming this processor.
    func invalid(_ message: String) -> OspreyError {
        .processing(.invalidArgument(processor: identifier, message: message))
    }
}

extension ImageProcessors {
    /// Runs `processors` over every frame of `image` lazily, then renders once.
    static func render(_ image: Image, through processors: [any FrameProcessor]) throws(OspreyError) -> Image {
        for processor in processors { try processor.validate(for: image) }
        let identifier = processors.map(\.identifier).joined(separator: ",")
        do throws(VipsFailure) {
            let (pixels, frameHeight) = try image.storage.mapFrames(frameHeight: image.height) { (frame) throws(VipsFailure) in
                var current = frame
                for processor in processors { current = try processor.transform(current) }
                return current
            }
            return image.replacing(storage: try pixels.normalisedToSRGB().materialised(), frameHeight: frameHeight)
        } catch {
            throw .processing(.failed(processor: identifier, message: error.message))
        }
    }
}
