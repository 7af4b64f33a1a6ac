import COspreyVips

extension ImageProcessors {
    /// Cuts away the border that has the colour of the top-left pixel (thumbor's `trim`,
    /// imgproxy's `t`), within `threshold` (default 10). An image that is all one colour is
    /// returned as is; animations are returned as is (their frames could trim differently).
    /// Identifier `trim:T`.
    public struct Trim: ImageProcessing {
        /// How far (in pixel value) a colour may be from the background and still be trimmed. Default 10.
        public let threshold: Double

        /// Trims with `threshold` (default 10).
        public init(threshold: Double = 10) {
            self.threshold = threshold
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        public var identifier: String { "trim:\(identifierNumber(threshold))" }

        /// Runs the processor; see ``ImageProcessing/process(_:)``.
        public func process(_ image: Image) throws(OspreyError) -> Image {
            guard !image.isAnimated else { return image }
            guard threshold >= 0 else { throw .processing(.invalidArgument(processor: identifier, message: "threshold \(threshold) must be ≥ 0")) }
            var left: Int32 = 0, top: Int32 = 0, width: Int32 = 0, height: Int32 = 0
            Vips.ensureInitialised()
            guard osprey_find_trim(image.storage.pointer, threshold, &left, &top, &width, &height) == 0 else {
                throw .processing(.failed(processor: identifier, message: Vips.takeError()))
            }
            guard width > 0, height > 0, width < image.width || height < image.height else { return image }
            return try Crop(.rect(x: Int(left), y: Int(top), width: Int(width), height: Int(height))).process(image)
        }
    }
}
