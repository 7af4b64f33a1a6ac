import Foundation
import Osprey

/// Brings sources through the ``ImagePipeline``: originals are downloaded once, kept on the
/// pipeline's disk cache with their validators (ETag / Last-Modified), and revalidated with the
/// origin once they are older than their freshness time.
///
/// Freshness: ``ServerConfiguration/originTTL``, shortened by the origin's `max-age`/`s-maxage`
/// (and `0` for `no-store`) when ``ServerConfiguration/respectOriginCacheControl`` is on.
///
/// - A source with nothing cached is downloaded by the first variant that needs it (different
///   sizes share the download); its original and validators go to the disk cache, and a
///   placeholder *probe* entry is stored beside them.
/// - A source that is not known to be fresh but is cached (stale, or unknown after a restart) is
///   validated first, once for all the requests that need it at that moment: the pipeline is
///   asked for the probe with ``OspreyOptions/refreshCached``, which finds the cached probe and
///   sends a conditional request with the stored validators: a `304` keeps the cached original
///   (nothing is downloaded or decoded), a `200` replaces it and its validators.
/// - Variants are always made from the original on disk, never from an older processed image:
///   the pipeline keeps no processed variants (their target cache keeps nothing in memory and
///   writes nothing but originals and validators to disk), since the server's own
///   ``ResultCache`` holds the encoded results, each at most as long as its source stays fresh.
///
/// An origin that fails while a cached copy is revalidated (unreachable, 5xx, 4xx, bytes that do
/// not decode) leaves the cached copy in use (the pipeline's stale-if-error), validated again on
/// the next request after the freshness time.
final class SourceLoader: Sendable {
    /// What the last validation of a source found.
    struct Validation: Sendable {
        /// When the origin was last asked (or the source was last downloaded).
        var at: ContinuousClock.Instant
        /// The source's frame count from its header, when read.
        var frames: Int?
        /// The source's upright size (after EXIF orientation) from its header, when read.
        var size: (width: Int, height: Int)?
        /// Whether this validation downloaded the source's bytes (a `200` on revalidation: the
        /// source changed).
        var downloaded = false
        /// Whether ``frames`` and ``size`` were looked up. After a variant's download they are
        /// read when a later request of the source needs them.
        var headerRead = false
    }

    /// The probe's processor: what the pipeline revalidates a source through. Its cache entry is
    /// a placeholder stored by the server; after a `200` the pipeline makes it from the new bytes
    /// (a 1x1 downsample of the first frame, folded into the decode).
    static let probe = ImageProcessors.Downsample(width: 1, height: 1)
    /// The probe entry stored beside a new original (no decode needed to make it).
    private static let placeholder = try? Image(rgba: [0, 0, 0, 0], width: 1, height: 1)

    let pipeline: ImagePipeline
    /// The pipeline's cache: probes in memory; originals and their validators on disk (with
    /// the probes a revalidation remade from new bytes).
    let cache: ImageCache
    /// The target cache of variants: its memory keeps nothing (no entry fits its cost limit) and
    /// it shares the disk of ``cache``, where ``OriginalsOnly`` lets only originals and
    /// validators be written, so a variant is always made from the current original.
    private let scratch: ImageCache
    private let configuration: ServerConfiguration
    private let policies: OriginPolicies
    /// The last validation of each source, kept while it is fresh, for the 20,000 sources (a few
    /// MB) validated last at most, so that memory does not grow with every source of the origin
    /// TTL; a dropped one costs a conditional request when a new variant of its source is asked for.
    private let validations = ExpiringTable<Validation>(capacity: SourceLoader.validationCapacity)
    /// See ``validations``.
    static let validationCapacity = 20_000
    /// Probe entries kept in memory at most: each costs ~200 bytes that the memory cache's cost
    /// (a 1x1 image's 4 bytes for a placeholder) does not count; a dropped one is stored again.
    static let probeEntryLimit = 10_000
    private let probes = Coalescer<Validation>()

    /// Validations in flight now.
    var validationsInFlight: Int { probes.count }

    init(configuration: ServerConfiguration, downloader: ImageDownloader, policies: OriginPolicies) {
        self.configuration = configuration
        self.policies = policies
        let directory =
            configuration.cacheDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("osprey-serve-\(UUID().uuidString)")
        // Entries outlive the freshness time: a stale original is revalidated, not dropped.
        let memory = MemoryStorage.Backend<Image>(
            config: MemoryStorage.Config(
                totalCostLimit: 16 << 20, countLimit: Self.probeEntryLimit,
                expiration: .never, extendingExpiration: .none))
        let disk = DiskStorage.Backend(
            config: DiskStorage.Config(
                name: "originals", directory: directory.appendingPathComponent("originals"),
                sizeLimit: configuration.diskCacheBytes, expiration: .never,
                extendingExpiration: .none))
        cache = ImageCache(memoryStorage: memory, diskStorage: disk)
        scratch = ImageCache(
            memoryStorage: MemoryStorage.Backend(config: MemoryStorage.Config(totalCostLimit: 1, countLimit: 1, expiration: .expired)),
            diskStorage: disk, serializer: OriginalsOnly())
        var options = OspreyOptions()
        options.decodingOptions = DecodingOptions(maxSourcePixels: configuration.maxSourcePixels)
        options.cacheOriginalImage = true
        options.memoryCacheAccessExtendingExpiration = ExpirationExtending.none
        options.diskCacheAccessExtendingExpiration = ExpirationExtending.none
        pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: downloader, defaultOptions: options))
    }

    /// How long `url` stays fresh after a validation.
    func freshness(of url: URL) -> Duration {
        var seconds = configuration.originTTL
        if configuration.respectOriginCacheControl, let policy = policies.policy(for: url) {
            if policy.noStore { seconds = 0 }
            if let maxAge = policy.maxAge { seconds = min(seconds, maxAge) }
        }
        return .seconds(max(0, seconds))
    }

    /// The validation of `url`: the last one while it is fresh, else a new one (shared by every
    /// request waiting for it; `new` tells which); `nil` when nothing of it is cached: the
    /// variant's own request downloads it (``image(for:processor:firstFrameOnly:validation:started:)``
    /// records that).
    func validate(_ url: URL) async throws(ServerError) -> (Validation?, new: Bool) {
        if var last = validations.get(url.absoluteString), ContinuousClock.now - last.at < freshness(of: url) {
            if !last.headerRead {
                last = await withHeader(last, key: pipeline.cacheKey(for: .url(url)))
                validations.set(url.absoluteString, last, until: last.at + freshness(of: url))
            }
            return (last, false)
        }
        let key = pipeline.cacheKey(for: .url(url))
        guard cache.isCached(forKey: key, processorIdentifier: Self.probe.identifier) || cache.diskStorage.isCached(forKey: key) else {
            return (nil, true)
        }
        let validation = try await probes.value(for: url.absoluteString) { [self] () async throws(ServerError) in
            try await revalidate(url, key: key)
        }.0
        return (validation, true)
    }

    /// Records that a variant's request has just downloaded `url` (its validation begun at
    /// `started`), for later requests: its probe placeholder is stored, its header is read by
    /// the first of them that comes (a source asked for once is not read again).
    private func downloaded(_ url: URL, at started: ContinuousClock.Instant) async {
        storePlaceholder(forKey: pipeline.cacheKey(for: .url(url)))
        validations.set(url.absoluteString, Validation(at: started), until: started + freshness(of: url))
    }

    /// The probe entry of a source whose original is cached, in memory only: a revalidation
    /// takes the original's validators when the probe has none on disk, and one that finds no
    /// probe stores it again. (On disk it was a PNG encode and a third file per miss.)
    private func storePlaceholder(forKey key: String) {
        guard let placeholder = Self.placeholder else { return }
        cache.store(placeholder, forKey: key, processorIdentifier: Self.probe.identifier, toDisk: false, completion: nil)
    }

    private func revalidate(_ url: URL, key: String) async throws(ServerError) -> Validation {
        let started = ContinuousClock.now
        // An original cached without its probe (a restart, or the memory cache dropped it) gets
        // a placeholder, so that the pipeline has an entry to revalidate.
        if !cache.isCached(forKey: key, processorIdentifier: Self.probe.identifier) { storePlaceholder(forKey: key) }
        var last: ImageResult?
        do {
            let events = pipeline.imageEvents(for: .url(url), options: [.refreshCached, .processor(Self.probe), .onlyLoadFirstFrame])
            for try await event in events {
                if case .finished(let result) = event { last = result }
            }
        } catch let error as OspreyError {
            throw ServerError(error)
        } catch {
            throw ServerError(status: 503, reason: "the request was cancelled while validating \(url.absoluteString)")
        }
        // A cancelled validation may have seen the cached copy but not the origin's answer: it validates nothing.
        guard let last, !Task.isCancelled else {
            throw ServerError(status: 503, reason: "the request was cancelled while validating \(url.absoluteString)")
        }
        let validation = await withHeader(Validation(at: started, downloaded: last.cacheType == .none || last.isRefresh), key: key)
        validations.set(url.absoluteString, validation, until: validation.at + freshness(of: url))
        return validation
    }

    /// `validation` with the frame count and upright size from the header of the original on
    /// disk (unchanged when it is not there or not an image).
    private func withHeader(_ validation: Validation, key: String) async -> Validation {
        var validation = validation
        validation.headerRead = true
        if let data = await cache.diskStorage.value(forKey: key), let header = try? ImageDecoder().header(of: data) {
            validation.frames = header.frameCount
            validation.size = header.orientation.swapsDimensions ? (header.height, header.width) : (header.width, header.height)
        }
        return validation
    }

    /// The image for `url` through `processor` (``PassThrough`` for none), made from the cached
    /// original or downloaded, after `validation` (from ``validate(_:)``, begun at `started`; a
    /// `nil` one records the download). With `firstFrameOnly` only the first frame of an
    /// animation is decoded (a still output format).
    /// The bytes of `url` as the origin sent them, when they are cached.
    func original(of url: URL) async -> Data? {
        await cache.diskStorage.value(forKey: pipeline.cacheKey(for: .url(url)))
    }

    func image(
        for url: URL, processor: any ImageProcessing, firstFrameOnly: Bool, validation: Validation?,
        started: ContinuousClock.Instant
    ) async throws(ServerError) -> ImageResult {
        var options: [OspreyOption] = [
            .processor(processor.identifier.isEmpty ? PassThrough() : processor),
            .targetCache(scratch), .originalCache(cache)
        ]
        if firstFrameOnly { options.append(.onlyLoadFirstFrame) }
        let result: ImageResult
        do throws(OspreyError) {
            result = try await pipeline.image(for: url, options: options)
        } catch {
            throw ServerError(error)
        }
        if validation == nil { await downloaded(url, at: started) }
        return result
    }
}

/// No processing, under an identifier of its own: the pipeline then stores a downloaded
/// original as it does for processed requests (the identity would store it through the target
/// cache's serializer).
struct PassThrough: ImageProcessing {
    var identifier: String { "osprey.serve.original" }
    func process(_ image: Image) throws(OspreyError) -> Image { image }
}

/// The serializer of the variants' target cache: writes originals (unprocessed bytes) and
/// refuses processed images, which the server keeps encoded in its own result cache instead.
struct OriginalsOnly: CacheSerializer {
    func data(with image: Image, original: Data?, processorIdentifier: String) throws(OspreyError) -> Data {
        guard processorIdentifier.isEmpty, let original else {
            throw .cache(.serializationFailed(key: processorIdentifier, message: "processed images are not kept on disk"))
        }
        return original
    }

    func image(with data: Data, options: DecodingOptions) throws(OspreyError) -> Image {
        try ImageDecoder(options: options).decode(data)
    }
}
