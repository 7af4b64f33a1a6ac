import Dispatch
import Foundation

/// The small RGBA raster a placeholder hash is computed from: at most 100 x 100 pixels, as the
/// ThumbHash reference requires ("encoding an image larger than 100x100 is slow with no benefit"),
/// and BlurHash's encoders recommend. Large images are shrunk by libvips first (the
/// `ImageProcessors.Downsample` processor, or shrink-on-load for encoded bytes), so a hash costs
/// a small DCT over at most 10,000 pixels.
struct PlaceholderRaster: Sendable {
    /// The largest width and height of the raster: 100 pixels.
    static let maxSide = 100

    let width: Int
    let height: Int
    /// `width * height * 4` bytes, RGBA8, row by row, alpha not premultiplied.
    let rgba: [UInt8]

    /// The first frame of `image`, downsampled into 100 x 100 when larger (aspect ratio kept).
    init(image: Image) throws(OspreyError) {
        guard let first = image.frame(at: 0) else {
            throw .processing(.invalidArgument(processor: "placeholder", message: "the image has no frame"))
        }
        let small = try ImageProcessors.Downsample(maxPixelSize: Self.maxSide).process(first)
        let pixels = try small.rgbaPixels()
        guard pixels.count == small.width * small.height * 4 else {
            throw .processing(
                .failed(processor: "placeholder", message: "expected \(small.width * small.height * 4) RGBA bytes, got \(pixels.count)"))
        }
        self.init(width: small.width, height: small.height, rgba: pixels)
    }

    /// Decodes `data` straight to at most 100 x 100 (libvips shrink-on-load, first frame only):
    /// the full-size pixels are never held.
    init(imageData data: Data) throws(OspreyError) {
        let options = DecodingOptions(thumbnail: .init(maxPixelSize: Self.maxSide), firstFrameOnly: true)
        try self.init(image: try ImageDecoder(options: options).decode(data))
    }

    init(width: Int, height: Int, rgba: [UInt8]) {
        self.width = width
        self.height = height
        self.rgba = rgba
    }

    /// Checks a caller's raster: `width` and `height` in 1...`maxSide`, `width * height * 4` bytes.
    static func validate(rgba: [UInt8], width: Int, height: Int, maxSide: Int, algorithm: String) throws(OspreyError) {
        guard (1...maxSide).contains(width), (1...maxSide).contains(height) else {
            throw .processing(.invalidArgument(processor: algorithm, message: "raster \(width)x\(height) must be 1...\(maxSide) pixels on each side"))
        }
        guard rgba.count == width * height * 4 else {
            throw .processing(
                .invalidArgument(processor: algorithm, message: "expected \(width * height * 4) RGBA bytes for \(width)x\(height), got \(rgba.count)")
            )
        }
    }

    /// Where placeholder work runs when asked for asynchronously: CPU work kept off the main
    /// thread and off Swift's cooperative pool.
    static let queue = DispatchQueue(label: "osprey.placeholders", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on ``queue`` and returns its result to the awaiting task.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws(OspreyError) -> T) async throws(OspreyError) -> T {
        try await queue.run(work)
    }
}

/// A hash input or output of the wrong kind: the first 100 characters of `hash`, for error reasons.
func placeholderHashExcerpt(_ hash: String) -> String {
    hash.count <= 100 ? hash : String(hash.prefix(100)) + "…"
}
