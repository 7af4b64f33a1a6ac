/// The namespace of Osprey's built-in processors, one type per file (`ImageProcessors+Resize.swift`, …).
///
/// Every built-in processor keeps the frames of an animation (each frame is processed alike) and
/// outputs sRGB with 8 bits per band, keeping alpha when the input had it (or when the processor
/// adds transparency, like `ImageProcessors.RoundCorner` without a background).
public enum ImageProcessors {
    /// The identity: returns the image unchanged. Identifier `""`, the key of an unprocessed image.
    public struct Identity: ImageProcessing {
        /// The identity processor.
        public init() {}
        /// The stable identifier (the processor's spec step); see ``ImageProcessing/identifier``.
        public var identifier: String { "" }
        /// Runs the processor; see ``ImageProcessing/process(_:)``.
        public func process(_ image: Image) throws(OspreyError) -> Image { image }
    }

    /// Runs processors in order. Identifier: the parts' identifiers joined by `,` (empty parts skipped).
    /// Consecutive built-in processors are rendered in one pass.
    public struct Composition: ImageProcessing {
        /// The processors, in the order they run; nested compositions are flattened.
        public let processors: [any ImageProcessing]

        /// A composition of `processors`, run first to last.
        public init(_ processors: [any ImageProcessing]) {
            // Each part's identifier is read once (a computed string): to skip the identity, and for the join.
            var flat: [any ImageProcessing] = []
            var identifiers: [String] = []
            for processor in processors {
                if let nested = processor as? Composition {
                    flat += nested.processors
                    if !nested.identifier.isEmpty { identifiers.append(nested.identifier) }
                } else {
                    let identifier = processor.identifier
                    guard !identifier.isEmpty else { continue }
                    flat.append(processor)
                    identifiers.append(identifier)
                }
            }
            self.processors = flat
            identifier = identifiers.joined(separator: ",")
        }

        /// The parts' identifiers joined by `,`, made once; see ``ImageProcessing/identifier``.
        public let identifier: String

        /// Runs the processor; see ``ImageProcessing/process(_:)``.
        public func process(_ image: Image) throws(OspreyError) -> Image {
            var current = image
            var pending: [any FrameProcessor] = []
            for processor in processors {
                if let frameProcessor = processor as? any FrameProcessor {
                    pending.append(frameProcessor)
                    continue
                }
                if !pending.isEmpty {
                    current = try ImageProcessors.render(current, through: pending)
                    pending.removeAll()
                }
                current = try processor.process(current)
            }
            if !pending.isEmpty { current = try ImageProcessors.render(current, through: pending) }
            return current
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Identity {
    /// The identity processor (identifier `""`).
    public static var identity: ImageProcessors.Identity { .init() }
}

/// Formats a number for identifiers: `2` rather than `2.0`, `1.5` as is.
func identifierNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return String(value)
}
