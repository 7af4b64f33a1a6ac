import Foundation
import Osprey

/// Brings sources through the pipeline's data stage (``ImagePipeline/data(for:options:maxAge:honoringOriginMaxAge:)``):
/// originals are downloaded once, kept on the pipeline's disk cache with their validators
/// (ETag / Last-Modified), and revalidated with the origin once they are older than their
/// freshness time; every variant is made from those bytes.
///
/// Freshness: ``ServerConfiguration/originTTL``, shortened by the origin's `max-age`/`s-maxage`
/// (and `0` for `no-store`) when ``ServerConfiguration/respectOriginCacheControl`` is on. The age
/// of an original is kept with it on disk (with the origin's `max-age`), so a restarted server
/// uses its fresh originals without asking the origin.
///
/// - A source with nothing cached is downloaded once for all the requests that need it at that
///   moment (the data stage shares the job), whatever variants they make of it.
/// - A cached source older than its freshness is revalidated with a conditional request: a
///   `304` keeps the cached original (nothing is downloaded), a `200` replaces it.
/// - An origin that fails while a cached copy is revalidated (unreachable, 5xx, 4xx, bytes that
///   are not an image) leaves the cached copy in use (stale-if-error), validated again on the next
///   request.
/// - The pipeline keeps no processed variants: the server's own ``ResultCache`` holds the encoded
///   results, each at most as long as its source stays fresh.
final class SourceLoader: Sendable {
    /// A source's bytes as the data stage returned them, with their header.
    struct Source: Sendable {
        /// The bytes, their validators and where they came from.
        var data: ImageData
        /// When the origin last sent or confirmed the bytes.
        var validatedAt: ContinuousClock.Instant
        /// The header (size, frames), `nil` when the bytes are not an image libvips reads.
        var header: ImageHeader?
        /// The key the source's decodes are shared under: its cache key and the version of its bytes.
        var key: String

        /// The frame count from the header.
        var frames: Int? { header?.frameCount }
        /// The upright size (after EXIF orientation) from the header.
        var size: (width: Int, height: Int)? {
            guard let header else { return nil }
            return header.orientation.swapsDimensions ? (header.height, header.width) : (header.width, header.height)
        }
        /// Whether this request waited for the origin to send the bytes (a miss).
        var downloaded: Bool { data.isFromOrigin }
    }

    let pipeline: ImagePipeline
    /// The pipeline's cache: originals and their validators on disk; nothing in memory.
    let cache: ImageCache
    private let configuration: ServerConfiguration
    private let policies: OriginPolicies

    init(configuration: ServerConfiguration, downloader: ImageDownloader, policies: OriginPolicies) {
        self.configuration = configuration
        self.policies = policies
        let directory =
            configuration.cacheDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("osprey-serve-\(UUID().uuidString)")
        // Entries outlive the freshness time: a stale original is revalidated, not dropped.
        let disk = DiskStorage.Backend(
            config: DiskStorage.Config(
                name: "originals", directory: directory.appendingPathComponent("originals"),
                sizeLimit: configuration.diskCacheBytes, expiration: .never,
                extendingExpiration: .none))
        let memory = MemoryStorage.Backend<Image>(config: MemoryStorage.Config(totalCostLimit: 1 << 20, countLimit: 1))
        cache = ImageCache(memoryStorage: memory, diskStorage: disk)
        // Variants are kept encoded by the server; the pipeline stores originals only (the data
        // stage's calls ask for storage).
        let options: [RequestOption] = [
            .decodingOptions(DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)), .storage(.none),
            .diskCacheAccessExtendingExpiration(.none)
        ]
        pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: downloader, defaultOptions: options))
    }

    /// Whether `url` is an upload kept in a bucket (``ServerConfiguration/uploadBucket``).
    func isBucketUpload(_ url: URL) -> Bool {
        guard configuration.upload, let uploads = configuration.uploadBucket, let location = S3Location(internal: url) else { return false }
        return location.bucket == uploads.bucket && location.key.hasPrefix(uploads.prefix)
    }

    /// How long `url` stays fresh after a validation: 0 for an upload in a bucket (each new variant
    /// asks the bucket with its ETag, so a replaced or deleted upload is seen by every instance).
    func freshness(of url: URL) -> Duration {
        if isBucketUpload(url) { return .zero }
        var seconds = configuration.originTTL
        if configuration.respectOriginCacheControl, let policy = policies.policy(for: url) {
            if policy.noStore { seconds = 0 }
            if let maxAge = policy.maxAge { seconds = min(seconds, maxAge) }
        }
        return .seconds(max(0, seconds))
    }

    /// Where a source's bytes come from.
    enum Reference: Sendable {
        /// An `http`/`https` origin, through the pipeline's data stage.
        case remote(URL)
        /// A file under the local root or the upload directory (``LocalSource``), read directly:
        /// the page cache is its cache, and its inode, size and modification time its version.
        case file(LocalSource.File)
    }

    /// The bytes of `reference`. A remote source is cached while fresh, revalidated when stale,
    /// downloaded when missing (shared by every request that needs it at that moment); a file is
    /// read (at most ``ServerConfiguration/maxSourceBytes``, 413 beyond) with its version as its
    /// validator (`ETag` and `Last-Modified`), so its decodes are keyed by that version.
    func source(_ reference: Reference, local: LocalSource) async throws(ServerError) -> Source {
        switch reference {
        case .remote(let url): return try await source(url)
        case .file(let file):
            let (bytes, read) = try local.read(file, maxBytes: configuration.maxSourceBytes)
            let data = ImageData(data: bytes, validator: CacheValidator(etag: read.etag, lastModified: read.lastModified), provenance: .origin)
            return Source(
                data: data, validatedAt: .now, header: try? ImageDecoder().header(of: bytes), key: "file:\(read.path)#\(read.version)")
        }
    }

    /// The bytes of `url`: cached while fresh, revalidated when stale, downloaded when missing
    /// (shared by every request that needs them at that moment).
    func source(_ url: URL) async throws(ServerError) -> Source {
        let data: ImageData
        do throws(OspreyError) {
            data = try await pipeline.data(
                for: .url(url), options: [.cachePolicy(.revalidate), .storage(.memoryAndDisk)], maxAge: freshness(of: url),
                honoringOriginMaxAge: configuration.respectOriginCacheControl)
        } catch {
            throw ServerError(error)
        }
        // An upload in a bucket that is gone is gone: no stale copy of it is served.
        if isBucketUpload(url), case .staleAfterError(let error) = data.provenance, ServerError(error).status == 404 {
            throw .notFound("no upload has the id \(url.lastPathComponent)")
        }
        let version = data.validator.map { "\($0.etag ?? "")|\($0.lastModified ?? "")" } ?? ""
        return Source(
            data: data, validatedAt: ContinuousClock.now - data.age, header: try? ImageDecoder().header(of: data.data),
            key: "\(pipeline.cacheKey(for: .url(url)))#\(data.data.count)#\(version)")
    }

    /// The image of `source` through `processor`; with `firstFrameOnly` only the first frame of
    /// an animation is decoded (a still output format). Requests making variants of the same
    /// bytes at the same time share each decode size and processor prefix.
    func image(of source: Source, processor: any ImageProcessing, firstFrameOnly: Bool) async throws(ServerError) -> ImageResult {
        var options: [RequestOption] = [.processor(processor), .cachePolicy(.reload)]
        if firstFrameOnly { options.append(.onlyLoadFirstFrame) }
        do throws(OspreyError) {
            return try await pipeline.image(for: .provider(RawImageDataProvider(data: source.data.data, cacheKey: source.key)), options: options)
        } catch {
            throw ServerError(error)
        }
    }
}
