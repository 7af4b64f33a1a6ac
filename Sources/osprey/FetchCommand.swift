import ArgumentParser
import Foundation
import Osprey

/// `osprey fetch <url>... [--process SPEC] [--keep-original] [--out DIR] [--cache-dir DIR] [--force-refresh]
/// [--only-from-cache] [--memory-only] [--refresh-cached] [--json]`.
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

        private enum CodingKeys: String, CodingKey {
            case url, cacheType, width, height, format, bytes, milliseconds, error, output, decodedWidth, decodedHeight, shrunkOnLoad
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
        }
    }

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
    }

    func run() async throws {
        let (pipeline, loader) = pipelineOptions.makePipeline()
        var options = pipelineOptions.requestOptions
        if forceRefresh { options.append(.forceRefresh) }
        if onlyFromCache { options.append(.onlyFromCache) }
        if memoryOnly { options.append(.cacheMemoryOnly) }
        if refreshCached { options.append(.refreshCached) }
        if let out { try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        let output = Output(
            spec: pipelineOptions.spec, processorIdentifier: pipelineOptions.processor.identifier, directory: out,
            readsCachedResult: !memoryOnly)
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
        for line in lines { print(format(line)) }
        if lines.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    private func format(_ line: Line) -> String {
        if json { return (try? JSONLine.string(line)) ?? "{}" }
        if let error = line.error { return "\(line.url): error: \(error)" }
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
    }

    private static func fetch(_ argument: String, pipeline: ImagePipeline, options: [OspreyOption], output: Output) async -> Line {
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
            for try await event in pipeline.imageEvents(for: source, options: options) {
                if case .finished(let result) = event { last = result }
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
