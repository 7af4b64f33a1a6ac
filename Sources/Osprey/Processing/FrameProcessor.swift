import COspreyVips

/// A built-in processor: a libvips transform applied to each frame, so animations keep their frames.
///
/// Frames are transformed lazily and materialised once at the end, so a ``ImageProcessors/Composition``
/// of built-in processors renders its pixels a single time.
protocol FrameProcessor: ImageProcessing {
    /// Checks arguments against the image before any pixel work; throws `invalidArgument`.
    func validate(for image: Image) throws(OspreyError)
    /// Whether a `width` x `height` frame comes out as it went in, so ``transform(_:)`` is skipped.
    func keepsFrame(width: Int, height: Int) -> Bool
    /// Transforms one frame (a still image, `frameWidth` x `frameHeight`).
    func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef
}

extension FrameProcessor {
    func validate(for image: Image) throws(OspreyError) {}

    func keepsFrame(width: Int, height: Int) -> Bool { false }

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
    /// Runs `processors` over every frame of `image` lazily, then renders once; a processor that
    /// keeps a frame as it is is skipped, and when every one does, `image` itself comes back.
    static func render(_ image: Image, through processors: [any FrameProcessor]) throws(OspreyError) -> Image {
        for processor in processors { try processor.validate(for: image) }
        // Why: a skipped step still cost a copy of the pixels (libvips' thumbnail at scale 1 runs
        // its colour and alpha passes), and the render itself a copy more. A kept frame keeps its
        // size, so checking each processor against the input size is enough.
        if processors.allSatisfy({ $0.keepsFrame(width: image.width, height: image.height) }) { return image }
        let identifier = processors.map(\.identifier).joined(separator: ",")
        do throws(VipsFailure) {
            let (pixels, frameHeight) = try image.storage.mapFrames(frameHeight: image.height) { (frame) throws(VipsFailure) in
                var current = frame
                for processor in processors where !processor.keepsFrame(width: current.width, height: current.height) {
                    current = try processor.transform(current)
                }
                return current
            }
            return image.replacing(storage: try pixels.normalisedToSRGB().materialised(), frameHeight: frameHeight)
        } catch {
            throw .processing(.failed(processor: identifier, message: error.message))
        }
    }
}
