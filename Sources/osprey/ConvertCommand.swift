import ArgumentParser
import Foundation
import Osprey

/// `osprey convert <in> <out> [--process SPEC] [--format F] [--quality Q] [--thumbnail N]`.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Decode an image, process it and encode it to another file.",
        discussion: """
            The output format is, in order: --format, a format step in --process, the output file's \
            extension, the input's format (PNG if it cannot be encoded). Without the first two, an \
            extension that names no format osprey writes (jpg, png, webp, gif, avif, jxl) is an \
            error. Inputs: JPEG, PNG, GIF, WebP, AVIF, HEIF, TIFF, BMP, JPEG XL, SVG and PDF (the \
            first page); SVG and PDF are drawn at the size the first resize asks for. Nothing is \
            written on failure.
            Processor spec steps: resize:WxH[:fit|fill|stretch], downsample:WxH, thumbnail:N, \
            crop:WxH[:gravity] or crop:WxH:X:Y, smartcrop:WxH, smartresize:WxH, trim[:T[:REF[:h|v|hv]]], \
            round:R[:corners][:color], border:W[:color], blur:S, sharpen[:S], tint:color, overlay:color[:F], \
            grayscale, bw[:T], color:B[:C[:S]], equalize, \
            convolve:K;K;...:COLUMNS[:raw], noise:A[:SEED], pixelate:N, flip[:h|v|hv], rotate:D, format:F[:Q], \
            quality:Q. Example: resize:200x200:fill,blur:2,round:12,format:webp:80
            """
    )

    @Argument(help: "The input image file.")
    var input: String

    @Argument(help: "The output file; written only on success.")
    var output: String

    @Option(name: .long, help: "A processor spec, e.g. resize:200x200:fill,round:12.")
    var process: String?

    @Option(name: .long, help: "Output format: jpeg, png, webp, gif, avif or jxl.")
    var format: String?

    @Option(name: .long, help: "Output quality 1...100 (default 80).")
    var quality: Int?

    @Option(name: .long, help: "Decode straight to at most N pixels on the longer side (shrink-on-load).")
    var thumbnail: Int?

    func validate() throws {
        if let process {
            do { _ = try ProcessingSpec(parsing: process) } catch { throw ValidationError(error.description) }
        }
        if let format, ImageFormat(name: format) == nil { throw ValidationError("unknown format \"\(format)\"") }
        if let format, let named = ImageFormat(name: format), !named.canEncode {
            throw ValidationError("osprey cannot write \(named) (it writes \(Self.writable))")
        }
        let specFormat = try? process.map { (text) throws(OspreyError) in try ProcessingSpec(parsing: text) }?.format
        if format == nil, specFormat == nil {
            let ext = URL(fileURLWithPath: output).pathExtension
            if !ext.isEmpty, ImageFormat(name: ext)?.canEncode != true {
                throw ValidationError("the output file \(output) ends in .\(ext), which names no format osprey writes (\(Self.writable))")
            }
        }
        if let quality, !(1...100).contains(quality) { throw ValidationError("quality \(quality) must be within 1...100") }
        if let thumbnail, thumbnail <= 0 { throw ValidationError("thumbnail size \(thumbnail) must be positive") }
    }

    func run() throws {
        do {
            let spec = try process.map { (text) throws(OspreyError) in try ProcessingSpec(parsing: text) } ?? ProcessingSpec()
            let options = DecodingOptions(thumbnail: thumbnail.map { .init(maxPixelSize: $0) })
            let data = try ImageDecoder.readFile(URL(fileURLWithPath: input))
            let image = try ImageDecoder(options: options).decode(data, processedBy: spec.processor)
            let outputFormat = chooseFormat(spec: spec, source: image.format)
            let bytes = try image.encoded(as: outputFormat, quality: quality ?? spec.quality ?? 80)
            do {
                try bytes.write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw WriteFailure(path: output, message: (error as NSError).localizedDescription)
            }
            print("\(output): \(outputFormat) \(image.width)x\(image.height), \(image.frameCount) frame(s), \(bytes.count) bytes")
        } catch {
            throw CommandFailure.report(error)
        }
    }

    /// The formats this build writes, for error messages: `jpeg, png, webp, gif, avif, jxl`.
    static var writable: String { ImageFormat.allCases.filter(\.canEncode).map(\.rawValue).joined(separator: ", ") }

    private func chooseFormat(spec: ProcessingSpec, source: ImageFormat?) -> ImageFormat {
        if let format, let named = ImageFormat(name: format) { return named }
        if let named = spec.format { return named }
        let ext = URL(fileURLWithPath: output).pathExtension
        if let byExtension = ImageFormat(name: ext), byExtension.canEncode { return byExtension }
        if let source, source.canEncode { return source }
        return .png
    }
}
