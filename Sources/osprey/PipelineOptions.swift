import ArgumentParser
import Foundation
import Osprey

/// Options shared by `fetch` and `prefetch`: the cache directory and the processor spec.
struct PipelineOptions: ParsableArguments {
    @Option(name: .long, help: "A processor spec, e.g. resize:200x200:fill,round:12.")
    var process: String?

    @Flag(
        name: .customLong("keep-original"),
        help: """
            With --process, also cache the original bytes, so that another --process on the URL \
            starts from them without downloading again. They count against the cache's size limit \
            (1 GiB), which originals fill about a hundred times sooner than thumbnails.
            """)
    var keepOriginal = false

    @Option(
        name: .customLong("cache-dir"),
        help: ArgumentHelp("The cache directory (default: $XDG_CACHE_HOME/osprey/default or ~/.cache/osprey/default).", valueName: "DIR"))
    var cacheDirectory: String?

    func validate() throws {
        if let process {
            do { _ = try ProcessingSpec(parsing: process) } catch { throw ValidationError(error.description) }
        }
    }

    var spec: ProcessingSpec {
        (try? process.map { (text) throws(OspreyError) in try ProcessingSpec(parsing: text) }) ?? ProcessingSpec()
    }

    /// A pipeline over the chosen cache directory with a downloader of its own (shut down by `finish`).
    /// Its memory cache stays empty (``requestOptions`` store nothing in memory), so it has no sweep.
    func makePipeline() -> (ImagePipeline, DataLoader) {
        let cache = ImageCache(
            name: "default", memoryConfig: MemoryStorage.Config(cleanInterval: 0),
            diskConfig: DiskStorage.Config(
                name: "default", directory: cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }))
        let loader = DataLoader()
        let downloader = ImageDownloader(loader: loader)
        return (ImagePipeline(cache: cache, downloader: downloader), loader)
    }

    /// The spec's processors, then, when it names an output format, an ``OutputFormatStep`` for
    /// it (at the spec's quality, default 80): the chain whose identifier keys the processed image.
    var processor: ImageProcessors.Composition {
        let spec = self.spec
        guard let format = spec.format else { return spec.processor }
        return spec.processor.append(OutputFormatStep(format: format, quality: spec.quality ?? 80))
    }

    /// The options every CLI request uses: the processor, results delivered after the cache
    /// writes (the process may exit right after), nothing kept in memory (the process ends after
    /// its sources, and a repeat within one run is a disk hit), original bytes cached beside the
    /// result only with `--keep-original` (Kingfisher's default: the cache holds what was asked
    /// for), and, when the spec names an output format, processed images cached in it (at the
    /// spec's quality, default 80), which then holds them: the cached bytes are the output file.
    /// An output format that cannot animate (JPEG, PNG, AVIF) decodes only the first frame of an
    /// animation, the one it would keep.
    var requestOptions: [RequestOption] {
        let spec = self.spec
        // Why nothing in memory: a memory cache held images no later request of the run asked
        // for, and its churn doubled the process's page faults.
        var options: [RequestOption] = [
            .processor(processor), .cacheWrites(.beforeDelivery), .returnsData, .memoryCacheExpiration(.expired)
        ]
        // Only on request: originals (about 100× a thumbnail) would fill the size limit and evict
        // the run's own results.
        if keepOriginal { options.append(.originalStorage(.disk)) }
        if let format = spec.format {
            options.append(.cacheSerializer(DefaultCacheSerializer(quality: spec.quality ?? 80, preferredFormat: format)))
            if !format.supportsAnimation { options.append(.onlyLoadFirstFrame) }
        }
        return options
    }

    /// Parses a command-line source: a URL with a scheme, or a path to a local file.
    static func source(_ argument: String) -> ImageSource? {
        if let url = URL(string: argument), let scheme = url.scheme, scheme.count > 1 { return .url(url) }
        guard !argument.isEmpty else { return nil }
        return .url(URL(fileURLWithPath: argument).standardizedFileURL)
    }
}
