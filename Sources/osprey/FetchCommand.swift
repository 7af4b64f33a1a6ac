import ArgumentParser
import Foundation
import Osprey

/// `osprey fetch <url>... [--process SPEC] [--keep-original] [--out DIR] [--cache-dir DIR] [--force-refresh]
/// [--only-from-cache] [--memory-only] [--refresh-cached] [--previews [--preview-interval S]] [--json]`.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch images through the pipeline: cache, download, decode, process, cache.",
        discussion: """
            Sources are URLs (http, https, file, data) or local paths. Duplicate sources share one \
            download. With --process the cache holds the processed image; add --keep-original to \
            cache the original bytes too, so that another --process on the URL never downloads \
            again. Exit 0 when every source succeeded, 1 when any failed.
            """
    )

    @Argument(help: "Image URLs or paths.")
    var urls: [String]

    @OptionGroup var pipelineOptions: PipelineOptions

    @Option(name: .long, help: ArgumentHelp("Write each processed image into DIR.", valueName: "DIR"))
    var out: String?

    @Flag(name: .customLong("force-refresh"), help: "Skip the caches and download again.")
    var forceRefresh = false

    @Flag(name: .customLong("only-from-cache"), help: "Never download; fail on a cache miss.")
    var onlyFromCache = false

    @Flag(name: .customLong("memory-only"), help: "Do not write to the disk cache.")
    var memoryOnly = false

    @Flag(name: .customLong("refresh-cached"), help: "Revalidate cached images with the server (ETag / Last-Modified).")
    var refreshCached = false

    @Flag(help: "Print one JSON object per source.")
    var json = false

    @Flag(help: "Decode previews of progressive JPEGs while they download; print a line for each before the final one.")
    var previews = false

    @Option(
        name: .customLong("preview-interval"),
        help: ArgumentHelp("With --previews, the shortest time between two preview decodes (default 0.5).", valueName: "SECONDS"))
    var previewInterval: Double = ProgressiveJPEG.default.interval

    struct Line: Codable {
        var url: String
        var cacheType: String?
        var width: Int?
        var height: Int?
        var format: String?
        var bytes: Int?
        var milliseconds: Double
        var error: String?
        var output: String?
        /// The size the original bytes were decoded to, when they were decoded for this result.
        var decodedWidth: Int?
        var decodedHeight: Int?
        /// Whether the first step was folded into the decode (libvips shrink-on-load).
        var shrunkOnLoad: Bool?
        /// A progressive preview's line (`--previews`): `true`, with the bytes received when it
        /// was decoded, the announced length and the scans it holds.
        var preview: Bool?
        var receivedBytes: Int?
        var expectedBytes: Int?
        var scans: Int?

        private enum CodingKeys: String, CodingKey {
            case url, cacheType, width, height, format, bytes, milliseconds, error, output, decodedWidth, decodedHeight, shrunkOnLoad
            case preview, receivedBytes, expectedBytes, scans
        }

        /// The line of a preview of `argument`.
        init(previewOf argument: String, _ result: ImageResult, milliseconds: Double) {
            self.init(url: argument, width: result.image.width, height: result.image.height, milliseconds: milliseconds)
            preview = true
            receivedBytes = result.preview?.receivedBytes
            expectedBytes = result.preview?.expectedBytes
            scans = result.preview?.scans
        }

        init(
            url: String, cacheType: String? = nil, width: Int? = nil, height: Int? = nil, format: String? = nil, bytes: Int? = nil,
            milliseconds: Double, error: String? = nil, output: String? = nil, decodedWidth: Int? = nil, decodedHeight: Int? = nil,
            shrunkOnLoad: Bool? = nil
        ) {
            self.url = url
            self.cacheType = cacheType
            self.width = width
            self.height = height
            self.format = format
            self.bytes = bytes
            self.milliseconds = milliseconds
            self.error = error
            self.output = output
            self.decodedWidth = decodedWidth
            self.decodedHeight = decodedHeight
            self.shrunkOnLoad = shrunkOnLoad
        }

        /// Absent values are left out, except `error`, which is always there (`null` on success).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url, forKey: .url)
            try container.encodeIfPresent(cacheType, forKey: .cacheType)
            try container.encodeIfPresent(width, forKey: .width)
            try container.encodeIfPresent(height, forKey: .height)
            try container.encodeIfPresent(format, forKey: .format)
            try container.encodeIfPresent(bytes, forKey: .bytes)
            try container.encode(milliseconds, forKey: .milliseconds)
            try container.encode(error, forKey: .error)
            try container.encodeIfPresent(output, forKey: .output)
            try container.encodeIfPresent(decodedWidth, forKey: .decodedWidth)
            try container.encodeIfPresent(decodedHeight, forKey: .decodedHeight)
            try container.encodeIfPresent(shrunkOnLoad, forKey: .shrunkOnLoad)
            try container.encodeIfPresent(preview, forKey: .preview)
            try container.encodeIfPresent(receivedBytes, forKey: .receivedBytes)
            try container.encodeIfPresent(expectedBytes, forKey: .expectedBytes)
            try container.encodeIfPresent(scans, forKey: .scans)
        }
    }

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        guard previewInterval >= 0, previewInterval.isFinite else { throw ValidationError("--preview-interval must be 0 or more seconds") }
    }

    func run() async throws {
        let (pipeline, loader) = pipelineOptions.makePipeline()
        var options = pipelineOptions.requestOptions
        if forceRefresh { options.append(.cachePolicy(.reload)) }
        if onlyFromCache { options.append(.cachePolicy(.cacheOnly)) }
        if memoryOnly { options.append(.storage(.memory)) }
        if refreshCached { options.append(.cachePolicy(.revalidate)) }
        if previews { options.append(.progressiveJPEG(ProgressiveJPEG(interval: previewInterval))) }
        if let out { try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        let json = self.json
        var printPreview: (@Sendable (Line) -> Void)?
        if previews { printPreview = { line in Self.printNow(Self.format(line, json: json)) } }
        let output = Output(
            spec: pipelineOptions.spec, processorIdentifier: pipelineOptions.processor.identifier, directory: out,
            readsCachedResult: !memoryOnly, printPreview: printPreview)
        let requestOptions = options
        let lines = await withTaskGroup(of: (Int, Line).self) { group in
            for (index, argument) in urls.enumerated() {
                group.addTask { (index, await Self.fetch(argument, pipeline: pipeline, options: requestOptions, output: output)) }
            }
            var lines = [Line?](repeating: nil, count: urls.count)
            for await (index, line) in group { lines[index] = line }
            return lines.compactMap { $0 }
        }
        try? await loader.shutdown()
        for line in lines { print(Self.format(line, json: json)) }
        if lines.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    /// Prints `text` and flushes standard output, so a preview's line shows while the image loads.
    private static func printNow(_ text: String) {
        print(text)
        fflush(nil)
    }

    private static func format(_ line: Line, json: Bool) -> String {
        if json { return (try? JSONLine.string(line)) ?? "{}" }
        if let error = line.error { return "\(line.url): error: \(error)" }
        if line.preview == true {
            return "\(line.url): preview \(line.width ?? 0)x\(line.height ?? 0) after \(line.receivedBytes ?? 0) bytes (\(line.scans ?? 0) scans)"
        }
        var text = "\(line.url): \(line.cacheType ?? "none") \(line.format ?? "?") \(line.width ?? 0)x\(line.height ?? 0)"
        text += ", \(line.bytes ?? 0) bytes, \(String(format: "%.1f", line.milliseconds)) ms"
        if let output = line.output { text += " -> \(output)" }
        return text
    }

    /// What `fetch` needs to describe and write a result.
    struct Output: Sendable {
        var spec: ProcessingSpec
        /// The identifier of the CLI's chain (the spec's processors and output format step).
        var processorIdentifier: String
        /// `--out`.
        var directory: String?
        /// Whether `--out` may copy the processed image's disk cache entry (not with `--memory-only`,
        /// where an entry left by an earlier run may be older than this result).
        var readsCachedResult: Bool
        /// With `--previews`: prints a preview's line at once.
        var printPreview: (@Sendable (Line) -> Void)?
    }

    private static func fetch(_ argument: String, pipeline: ImagePipeline, options: [RequestOption], output: Output) async -> Line {
        let spec = output.spec
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Double {
            let duration = clock.now - start
            return Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }
        guard let source = PipelineOptions.source(argument) else {
            return Line(url: argument, milliseconds: 0, error: "not a URL or path")
        }
        do {
            var last: ImageResult?
            if let printPreview = output.printPreview {
                for try await result in pipeline.images(for: source, options: options) {
                    guard result.isPreview else {
                        last = result
                        continue
                    }
                    printPreview(Line(previewOf: argument, result, milliseconds: elapsed()))
                }
            } else {
                for await event in pipeline.imageTask(for: source, options: options).events {
                    if case .finished(let result) = event { last = try result.get() }
                }
            }
            guard let result = last else { throw OspreyError.pipeline(.unexpected(message: "no result")) }
            let image = result.image
            let format = spec.format ?? image.format.flatMap { $0.canEncode ? $0 : nil } ?? .png
            let key = ImageCache.computedKey(pipeline.cacheKey(for: source), processorIdentifier: output.processorIdentifier)
            var bytes = result.data?.count ?? Self.cachedSize(ofKey: key, pipeline: pipeline)
            var path: String?
            // No processor and no format step: the chain's identifier is empty.
            let unprocessed = output.processorIdentifier.isEmpty
            // What --out writes: the original bytes when unprocessed, else the image in `format`.
            let written = unprocessed ? (image.format ?? format) : format
            if let out = output.directory {
                let data: Data
                if unprocessed, let original = result.data {
                    data = original
                } else if spec.format != nil, output.readsCachedResult,
                    let stored = await pipeline.configuration.cache.diskStorage.value(forKey: key),
                    ImageFormat(sniffing: stored) == format
                {
                    // The cached entry is this image in the output format at the output quality (the
                    // spec's format step is in its key): the same file from the network, memory or
                    // disk, and no second encode.
                    data = stored
                } else {
                    data = try image.encoded(as: format, quality: spec.quality ?? 80)
                }
                let name = Self.fileName(for: source, format: written)
                let file = URL(fileURLWithPath: out).appendingPathComponent(name)
                try data.write(to: file, options: .atomic)
                bytes = data.count
                path = file.path
            }
            return Line(
                url: argument, cacheType: result.cacheType.rawValue, width: image.width, height: image.height,
                format: written.rawValue, bytes: bytes, milliseconds: elapsed(), error: nil, output: path,
                decodedWidth: result.decoded?.width, decodedHeight: result.decoded?.height, shrunkOnLoad: result.decoded?.shrunkOnLoad)
        } catch {
            let message = (error as? OspreyError)?.description ?? "\(error)"
            return Line(url: argument, milliseconds: elapsed(), error: message)
        }
    }

    /// The size of the processed image's disk cache entry, when there is one.
    static func cachedSize(ofKey key: String, pipeline: ImagePipeline) -> Int? {
        let url = pipeline.configuration.cache.diskStorage.fileURL(forKey: key)
        return (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
    }

    /// A file name for a source: its last path component (sanitised) plus a short hash-free suffix.
    static func fileName(for source: ImageSource, format: ImageFormat) -> String {
        let base = (source.url?.deletingPathExtension().lastPathComponent ?? source.cacheKey)
        let safe = String(base.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(80))
        return (safe.isEmpty ? "image" : safe) + "." + format.fileExtension
    }
}
