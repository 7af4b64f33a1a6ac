import Foundation

/// The data stage: a source's original bytes as an API of its own (Nuke's `data(for:)`), read
/// from the original cache's disk or loaded, and revalidated with the origin by policy. The
/// server builds on it: it keeps originals here and makes every variant from these bytes.
extension ImagePipeline {
    /// The original bytes of `source`, exactly as the origin sent them, from the original cache's
    /// disk (``RequestOption/originalCache(_:)``, else the target cache) or loaded, by the options'
    /// ``RequestOption/cachePolicy(_:)``:
    ///
    /// - ``CachePolicy/useCached`` (default): the cached bytes whatever their age, else load.
    /// - ``CachePolicy/revalidate``: the cached bytes when younger than `maxAge` (and than the
    ///   origin's `max-age`, when `honoringOriginMaxAge`); older ones are revalidated with a
    ///   conditional request first: a `304` keeps them (``ImageData/Provenance/revalidated``), a
    ///   `200` replaces them (``ImageData/Provenance/origin``), and a failure of the origin
    ///   (unreachable, an error status, bytes that are not an image) returns them anyway
    ///   (``ImageData/Provenance/staleAfterError(_:)``, stale-if-error). A miss loads.
    /// - ``CachePolicy/reload`` and ``CachePolicy/memoryOrLoad`` (bytes have no memory level): load.
    /// - ``CachePolicy/cacheOnly``: the cached bytes, else
    ///   ``OspreyError/PipelineReason/imageNotExisting(key:)``.
    ///
    /// Loaded bytes are stored on the original cache's disk with their validators and the origin's
    /// `max-age` (not when ``RequestOption/storage(_:)`` is ``CacheStorage/none``; a failed write is
    /// logged, the bytes are returned). Callers asking for the same source at the same time share
    /// one job (one disk read or one download); cancelling the calling task leaves it, and the
    /// last caller to leave cancels it.
    ///
    /// - Parameters:
    ///   - source: the source; its cache key goes through ``Configuration/cacheKeyFilter``.
    ///   - items: per-call options over the pipeline's defaults (the cache policy, caches,
    ///     downloader and request options are used; processors and decoding are not).
    ///   - maxAge: how long bytes stay fresh under ``CachePolicy/revalidate``. Default `.zero`:
    ///     revalidated every time.
    ///   - honoringOriginMaxAge: whether the origin's `max-age` (or `no-store`) shortens
    ///     `maxAge`. Default `true`.
    /// - Throws: the download's ``OspreyError``, or a cancellation.
    public func data(
        for source: ImageSource, options items: [RequestOption] = [], maxAge: Duration = .zero,
        honoringOriginMaxAge: Bool = true
    ) async throws(OspreyError) -> ImageData {
        let options = offlinePolicy(resolvedOptions(items), source)
        let request = DataRequest(
            source: source, key: cacheKey(for: source), options: options,
            cache: options.originalCache ?? options.targetCache ?? configuration.cache,
            downloader: options.downloader ?? configuration.downloader,
            freshness: options.cachePolicy == .revalidate ? maxAge : .zero, honoringOriginMaxAge: honoringOriginMaxAge)
        return try await dataJobs.value(for: DataJobKey(request)) { () throws(OspreyError) in
            try await self.loadData(request)
        }.0
    }

    /// The data stage's work for one job.
    private func loadData(_ request: DataRequest) async throws(OspreyError) -> ImageData {
        let policy = request.options.cachePolicy, key = request.key
        if policy.readsDisk, let entry = request.cache.diskStorage.entry(forKey: key, servingExpired: servesExpired(request.source)) {
            let stored = StoredOrigin(diskMeta: entry.meta)
            let age = Duration.seconds(max(0, Date().timeIntervalSince1970 - entry.created))
            let cached = ImageData(
                data: entry.data, validator: stored.validator, originMaxAge: stored.maxAge, age: age, provenance: .cache)
            guard policy == .revalidate, age >= request.freshLimit(originMaxAge: stored.maxAge) else { return cached }
            return try await revalidated(cached, request)
        }
        if policy == .cacheOnly { throw .pipeline(.imageNotExisting(key: key)) }
        let download = try await load(request, validator: nil)
        let loaded = ImageData(
            data: download.data, validator: download.response.validator,
            originMaxAge: StoredOrigin.maxAge(of: download.response), provenance: .origin)
        await store(loaded, request)
        return loaded
    }

    /// `cached` after asking the origin whether it changed.
    private func revalidated(_ cached: ImageData, _ request: DataRequest) async throws(OspreyError) -> ImageData {
        var result = cached
        do throws(OspreyError) {
            let download = try await load(request, validator: cached.validator)
            if download.isNotModified {
                result.validator = download.response.validator ?? cached.validator
                result.originMaxAge = StoredOrigin.maxAge(of: download.response) ?? cached.originMaxAge
                result.age = .zero
                result.provenance = .revalidated
            } else if ImageFormat(sniffing: download.data) == nil {
                let leading = download.data.prefix(8).map { String(format: "%02x", $0) }.joined()
                result.provenance = .staleAfterError(.decoding(.unsupportedFormat(leadingBytes: leading)))
                return result
            } else {
                result = ImageData(
                    data: download.data, validator: download.response.validator,
                    originMaxAge: StoredOrigin.maxAge(of: download.response), provenance: .origin)
            }
        } catch  where error.isCancellation {
            throw error
        } catch {
            configuration.logger.debug("revalidation failed", metadata: ["osprey.key": "\(request.key)", "osprey.error": "\(error)"])
            result.provenance = .staleAfterError(error)
            return result
        }
        // Stored again after a 304 too: the entry's time is when the origin last confirmed it.
        await store(result, request)
        return result
    }

    /// Loads the request's source (conditionally with `validator`).
    private func load(_ request: DataRequest, validator: CacheValidator?) async throws(OspreyError) -> DownloadResult {
        try await load(request.source, downloader: request.downloader, options: request.options.downloadOptions(validator: validator))
    }

    /// Writes `data` to the original cache's disk with what is known of its origin.
    private func store(_ data: ImageData, _ request: DataRequest) async {
        guard request.options.storage != .none else { return }
        let meta = StoredOrigin(validator: data.validator, maxAge: data.originMaxAge).diskMeta
        do {
            try await request.cache.diskStorage.store(data.data, forKey: request.key, expiration: nil, meta: meta)
        } catch {
            configuration.logger.warning("original not stored", metadata: ["osprey.key": "\(request.key)", "osprey.error": "\(error)"])
        }
    }
}

/// One call of ``ImagePipeline/data(for:options:maxAge:honoringOriginMaxAge:)``, resolved.
struct DataRequest: Sendable {
    let source: ImageSource
    let key: String
    let options: ResolvedOptions
    let cache: ImageCache
    let downloader: ImageDownloader
    /// How long cached bytes are used without asking (``CachePolicy/revalidate`` only).
    let freshness: Duration
    let honoringOriginMaxAge: Bool

    /// The age from which cached bytes are revalidated.
    func freshLimit(originMaxAge: Int?) -> Duration {
        guard honoringOriginMaxAge, let originMaxAge else { return freshness }
        return min(freshness, .seconds(originMaxAge))
    }
}

/// What the original cache keeps about an origin's response in a disk entry's `meta`: the
/// validators (``CacheValidator/diskMeta``) and a `max-age:` line.
struct StoredOrigin: Sendable {
    var validator: CacheValidator?
    var maxAge: Int?

    init(validator: CacheValidator?, maxAge: Int?) {
        self.validator = validator
        self.maxAge = maxAge
    }

    init(diskMeta: Data) {
        validator = CacheValidator(diskMeta: diskMeta)
        maxAge = String(decoding: diskMeta, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("max-age:") }.flatMap { Int($0.dropFirst(8)) }
    }

    var diskMeta: Data {
        var meta = validator?.diskMeta ?? Data()
        if let maxAge { meta.append(contentsOf: "max-age:\(maxAge)\n".utf8) }
        return meta
    }

    /// The freshness a response's `Cache-Control` gives: `s-maxage`, else `max-age`, `0` for
    /// `no-store` or `no-cache`; `nil` when it says none of these.
    static func maxAge(of response: DownloadResponse) -> Int? {
        response.value(forHTTPHeaderField: "Cache-Control").flatMap { CacheControl($0).freshness }
    }
}
