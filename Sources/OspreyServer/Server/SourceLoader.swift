import Foundation
import Osprey
import Synchronization

/// Brings sources through the ``ImagePipeline``: originals are downloaded once, kept in the
/// pipeline's cache (memory for a tiny probe image, disk for the original bytes and their
/// validators) and revalidated with the origin once they are older than their freshness time.
///
/// Freshness: ``ServerConfiguration/originTTL``, shortened by the origin's `max-age`/`s-maxage`
/// (and `0` for `no-store`) when ``ServerConfiguration/respectOriginCacheControl`` is on. A
/// source that is not known to be fresh (first use, stale, or unknown after a restart) is
/// validated first, once for all the requests that need it at that moment:
/// the pipeline is asked for a 1x1 *probe* of it with ``OspreyOptions/refreshCached``. When the
/// probe is cached, the pipeline sends a conditional request with the stored ETag /
/// Last-Modified: a `304` keeps the cached original (nothing is downloaded), a `200` replaces it
/// (and its validators); when it is not, the source is downloaded and its original stored.
/// The variants are then made from the original on disk, never from an older processed image:
/// the pipeline keeps no processed variants (its target cache for them keeps nothing), since the
/// server's own ``ResultCache`` holds the encoded results, each at most as long as its source
/// stays fresh.
///
/// An origin that fails while a cached copy is revalidated (unreachable, 5xx, 4xx, bytes that do
/// not decode) leaves the cached copy in use (the pipeline's stale-if-error), validated again on
/// the next request after the freshness time. The conditional request needs the probe's cache
/// entry: when the disk cache has dropped the probe but kept the original, that validation reuses
/// the original without asking the origin (the next one, a freshness time later, asks).
final class SourceLoader: Sendable {
    /// What the last validation of a source found.
    struct Validation: Sendable {
        /// When the origin was last asked (or the source was last downloaded).
        var at: ContinuousClock.Instant
        /// The source's frame count from its header, when its bytes were on disk to read.
        var frames: Int?
        /// The source's upright size (after EXIF orientation) from its header, when read.
        var size: (width: Int, height: Int)?
        /// Whether this validation downloaded the source's bytes (its first download, or a `200`
        /// on revalidation: the source changed).
        var downloaded: Bool
    }

    /// The processor of the probe: a 1x1 downsample, folded into the decode (shrink-on-load).
    static let probe = ImageProcessors.Downsample(width: 1, height: 1)

    let pipeline: ImagePipeline
    /// The pipeline's cache: probes in memory, originals and validators on disk.
    let cache: ImageCache
    /// The target cache of variants: keeps nothing (entries expire at once and none is small
    /// enough for its cost limit), so a variant is always made from the current original.
    private let scratch: ImageCache
    private let configuration: ServerConfiguration
    private let policies: OriginPolicies
    private let validations = ValidationTable()
    private let probes = Coalescer<Validation>()

    /// Validations in flight now.
    var validationsInFlight: Int { probes.count }

    init(configuration: ServerConfiguration, downloader: ImageDownloader, policies: OriginPolicies) {
        self.configuration = configuration
        self.policies = policies
        let directory = configuration.cacheDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("osprey-serve-\(UUID().uuidString)")
        // Entries outlive the freshness time: a stale original is revalidated, not dropped.
        let memory = MemoryStorage.Config(totalCostLimit: 16 << 20, countLimit: 100_000, expiration: .never,
                                          extendingExpiration: .none)
        let disk = DiskStorage.Config(name: "originals", directory: directory.appendingPathComponent("originals"),
                                      sizeLimit: configuration.diskCacheBytes, expiration: .never, extendingExpiration: .none)
        cache = ImageCache(name: "osprey-serve", memoryConfig: memory, diskConfig: disk)
        scratch = ImageCache(name: "osprey-serve-scratch",
                             memoryConfig: MemoryStorage.Config(totalCostLimit: 1, countLimit: 1, expiration: .expired),
                             diskConfig: DiskStorage.Config(name: "scratch", directory: directory.appendingPathComponent("scratch"), sizeLimit: 1))
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
    /// request waiting for it); `new` tells which.
    func validate(_ url: URL) async throws(ServerError) -> (Validation, new: Bool) {
        if let last = validations.get(url.absoluteString), ContinuousClock.now - last.at < freshness(of: url) {
            return (last, false)
        }
        let validation = try await probes.value(for: url.absoluteString) { [self] () async throws(ServerError) in
            try await probe(url)
        }.0
        return (validation, true)
    }

    private func probe(_ url: URL) async throws(ServerError) -> Validation {
        let started = ContinuousClock.now
        var last: ImageResult?
        do {
            let events = pipeline.imageEvents(for: .url(url), options: [.refreshCached, .processor(Self.probe), .onlyLoadFirstFrame])
            for try await event in events {
                if case .finished(let result) = event { last = result }
            }
        } catch let error as OspreyError {
            throw ServerError(error)
        } catch {
            throw ServerError(status: 503, reason: "the request was cancelled while fetching \(url.absoluteString)")
        }
        // A cancelled probe may have seen the cached copy but not the origin's answer: it validates nothing.
        guard let last, !Task.isCancelled else {
            throw ServerError(status: 503, reason: "the request was cancelled while fetching \(url.absoluteString)")
        }
        // The frame count and size come from the header of the original on disk (the probe
        // decodes one frame, shrunk).
        var validation = Validation(at: started, downloaded: last.cacheType == .none || last.isRefresh)
        if let data = await cache.diskStorage.value(forKey: pipeline.cacheKey(for: .url(url))),
           let header = try? ImageDecoder().header(of: data) {
            validation.frames = header.frameCount
            validation.size = header.orientation.swapsDimensions ? (header.height, header.width) : (header.width, header.height)
        }
        validations.set(url.absoluteString, validation, keepingFor: freshness(of: url))
        return validation
    }

    /// The image for `url` through `processor`, made from the validated original. With
    /// `firstFrameOnly` only the first frame of an animation is decoded (a still output format).
    func image(for url: URL, processor: any ImageProcessing, firstFrameOnly: Bool) async throws(ServerError) -> ImageResult {
        var options: [OspreyOption] = [.processor(processor), .targetCache(scratch), .originalCache(cache), .cacheMemoryOnly]
        if firstFrameOnly { options.append(.onlyLoadFirstFrame) }
        do throws(OspreyError) {
            return try await pipeline.image(for: url, options: options)
        } catch {
            throw ServerError(error)
        }
    }
}

/// The last validation of each source, by URL. Entries whose freshness time has passed are
/// dropped when the table grows, so it stays about as large as the set of fresh sources.
final class ValidationTable: Sendable {
    private struct Entry {
        var validation: SourceLoader.Validation
        var until: ContinuousClock.Instant
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Size at which stale entries are next pruned (doubling while they are all fresh, so
        /// pruning costs a constant time per insertion).
        var pruneAt = 10_000
    }

    private let state = Mutex(State())

    func get(_ key: String) -> SourceLoader.Validation? {
        state.withLock { $0.entries[key]?.validation }
    }

    func set(_ key: String, _ validation: SourceLoader.Validation, keepingFor freshness: Duration) {
        state.withLock { state in
            if state.entries.count >= state.pruneAt {
                let now = ContinuousClock.now
                state.entries = state.entries.filter { $0.value.until > now }
                state.pruneAt = max(10_000, state.entries.count * 2)
            }
            state.entries[key] = Entry(validation: validation, until: validation.at + freshness)
        }
    }
}
