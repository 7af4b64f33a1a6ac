import Foundation

/// A two-level image cache: decoded ``Image``s in a ``MemoryStorage/Backend``, their bytes in a
/// ``DiskStorage/Backend``, in the manner of Kingfisher's `ImageCache`.
///
/// Entries are keyed by the source key combined with the processor identifier
/// (`computedKey(_:processorIdentifier:)`), so a processed variant never shadows the original.
/// Stores go to memory synchronously and to disk in the background through a ``CacheSerializer``;
/// lookups try memory, then disk (decoding and, by default, promoting the image to memory).
///
/// Every operation is async or synchronous; none blocks on the disk.
public final class ImageCache: Sendable {
    /// The memory level: decoded images, charged by ``Image/cost``.
    public let memoryStorage: MemoryStorage.Backend<Image>
    /// The disk level: encoded bytes.
    public let diskStorage: DiskStorage.Backend
    /// The serializer of the disk level, unless a request names its own. Default ``DefaultCacheSerializer``.
    public let serializer: any CacheSerializer

    /// The shared cache named `"default"`, with default memory and disk configurations
    /// (disk at `$XDG_CACHE_HOME/osprey/default` or `~/.cache/osprey/default`).
    public static let `default` = ImageCache(name: "default")

    /// Makes a cache from its two levels.
    public init(
        memoryStorage: MemoryStorage.Backend<Image>, diskStorage: DiskStorage.Backend,
        serializer: any CacheSerializer = DefaultCacheSerializer()
    ) {
        self.memoryStorage = memoryStorage
        self.diskStorage = diskStorage
        self.serializer = serializer
    }

    /// Makes a cache named `name`: memory with `memoryConfig` (default ``MemoryStorage/Config/init(totalCostLimit:countLimit:entryCostLimitRatio:expiration:extendingExpiration:cleanInterval:evictionPolicy:now:)``
    /// defaults), disk with `diskConfig` (default: `DiskStorage.Config(name: name)`).
    public convenience init(
        name: String, memoryConfig: MemoryStorage.Config = .init(), diskConfig: DiskStorage.Config? = nil,
        serializer: any CacheSerializer = DefaultCacheSerializer()
    ) {
        self.init(
            memoryStorage: MemoryStorage.Backend(config: memoryConfig),
            diskStorage: DiskStorage.Backend(config: diskConfig ?? DiskStorage.Config(name: name)),
            serializer: serializer)
    }

    /// The key an entry is stored under: `key` itself when `processorIdentifier` is empty,
    /// else `"key@processorIdentifier"`.
    package static func computedKey(_ key: String, processorIdentifier: String) -> String {
        processorIdentifier.isEmpty ? key : "\(key)@\(processorIdentifier)"
    }

    // MARK: Storing

    /// Stores `image` in memory (now) and, when `toDisk` (the default), its bytes on disk (the
    /// serializer's choice: by default `original` when the image is unprocessed). Returns both
    /// results once the disk write is done.
    @discardableResult
    public func store(
        _ image: Image, original: Data? = nil, forKey key: String, processorIdentifier: String = "", toDisk: Bool = true
    ) async -> CacheStoreResult {
        await store(
            image, original: original, forKey: key, processorIdentifier: processorIdentifier, options: CacheOptions(),
            toDisk: toDisk)
    }

    /// ``store(_:original:forKey:processorIdentifier:toDisk:)`` with a request's cache `options`,
    /// and the download's HTTP validators kept in the disk entry (for ``CachePolicy/revalidate``).
    @discardableResult
    package func store(
        _ image: Image, original: Data? = nil, forKey key: String, processorIdentifier: String = "",
        options: CacheOptions, toDisk: Bool = true, validator: CacheValidator? = nil
    ) async -> CacheStoreResult {
        await withCheckedContinuation { continuation in
            store(
                image, original: original, forKey: key, processorIdentifier: processorIdentifier, options: options,
                toDisk: toDisk, validator: validator
            ) { continuation.resume(returning: $0) }
        }
    }

    /// The background store with the download's HTTP validators kept in the disk entry.
    func store(
        _ image: Image, original: Data?, forKey key: String, processorIdentifier: String,
        options: CacheOptions, toDisk: Bool, validator: CacheValidator?,
        completion: (@Sendable (CacheStoreResult) -> Void)?
    ) {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        let memory = storeInMemory(image, computedKey: computed, expiration: options.memoryExpiration)
        guard toDisk else {
            if let completion {
                options.callbackQueue.async { completion(CacheStoreResult(memoryCacheResult: memory, diskCacheResult: .success(()))) }
            }
            return
        }
        Task {
            storeOnDisk(
                image, original: original, computedKey: computed, processorIdentifier: processorIdentifier,
                options: options, validator: validator
            ) { disk in
                if let completion {
                    options.callbackQueue.async { completion(CacheStoreResult(memoryCacheResult: memory, diskCacheResult: disk)) }
                }
            }
        }
    }

    /// ``store(_:original:forKey:processorIdentifier:options:toDisk:validator:)`` for a caller that
    /// is not a task: encodes and writes on the caller's thread, then calls `done` there (on the
    /// disk storage's queue when the write had to wait for a clean or trim).
    func store(
        _ image: Image, original: Data?, forKey key: String, processorIdentifier: String,
        options: CacheOptions, toDisk: Bool, validator: CacheValidator?,
        done: @escaping @Sendable (CacheStoreResult) -> Void
    ) {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        let memory = storeInMemory(image, computedKey: computed, expiration: options.memoryExpiration)
        guard toDisk else { return done(CacheStoreResult(memoryCacheResult: memory, diskCacheResult: .success(()))) }
        storeOnDisk(
            image, original: original, computedKey: computed, processorIdentifier: processorIdentifier,
            options: options, validator: validator
        ) { disk in done(CacheStoreResult(memoryCacheResult: memory, diskCacheResult: disk)) }
    }

    /// Stores already-encoded bytes on disk only (as a downloader does before decoding).
    /// - Throws: the disk storage's ``OspreyError/cache(_:)`` errors.
    package func storeToDisk(
        _ data: Data, forKey key: String, processorIdentifier: String = "",
        expiration: StorageExpiration? = nil
    ) async throws(OspreyError) {
        try await diskStorage.store(data, forKey: Self.computedKey(key, processorIdentifier: processorIdentifier), expiration: expiration)
    }

    /// ``storeToDisk(_:forKey:processorIdentifier:expiration:)`` of downloaded bytes with their HTTP validators.
    func storeToDisk(_ data: Data, forKey key: String, validator: CacheValidator?) async throws(OspreyError) {
        try await withCheckedContinuation { continuation in
            storeToDisk(data, forKey: key, validator: validator) { continuation.resume(returning: $0) }
        }.get()
    }

    /// ``storeToDisk(_:forKey:validator:)`` for a caller that is not a task: `done` is called on the
    /// calling thread (on the disk storage's queue when the write waited for a clean or trim).
    func storeToDisk(
        _ data: Data, forKey key: String, validator: CacheValidator?, done: @escaping @Sendable (Result<Void, OspreyError>) -> Void
    ) {
        diskStorage.store(data, forKey: key, expiration: nil, meta: validator?.diskMeta ?? Data(), done: done)
    }

    /// The HTTP validators stored with the disk entry of `key` + `processorIdentifier`, if any.
    func storedValidator(forKey key: String, processorIdentifier: String) -> CacheValidator? {
        diskStorage.meta(forKey: Self.computedKey(key, processorIdentifier: processorIdentifier)).flatMap(CacheValidator.init(diskMeta:))
    }

    /// Stores `image` in memory under `computedKey` (the key with the processor identifier).
    func storeInMemory(_ image: Image, computedKey: String, expiration: StorageExpiration?) -> Result<Void, OspreyError> {
        Result { () throws(OspreyError) in
            try memoryStorage.store(image, forKey: computedKey, cost: image.cost, expiration: expiration)
        }
    }

    /// The serializer's bytes of `image` written under `computedKey`; `done` gets the outcome on
    /// the calling thread (on the disk storage's queue when the write waited for a clean or trim).
    func storeOnDisk(
        _ image: Image, original: Data?, computedKey: String, processorIdentifier: String,
        options: CacheOptions, validator: CacheValidator?, done: @escaping @Sendable (Result<Void, OspreyError>) -> Void
    ) {
        switch serialized(image, original: original, computedKey: computedKey, processorIdentifier: processorIdentifier, options: options) {
        case .failure(let error): done(.failure(error))
        case .success(let data):
            diskStorage.store(data, forKey: computedKey, expiration: options.diskExpiration, meta: validator?.diskMeta ?? Data(), done: done)
        }
    }

    /// The bytes the serializer (the options', else the cache's) makes of `image`.
    private func serialized(
        _ image: Image, original: Data?, computedKey: String, processorIdentifier: String, options: CacheOptions
    ) -> Result<Data, OspreyError> {
        let serializer = options.serializer ?? self.serializer
        do throws(OspreyError) {
            return .success(try serializer.data(with: image, original: original, processorIdentifier: processorIdentifier))
        } catch {
            return .failure(.cache(.serializationFailed(key: computedKey, message: error.description)))
        }
    }

    // MARK: Retrieving

    /// Looks in memory, then on disk. A disk hit is decoded and put into memory. Bytes on disk that
    /// do not decode (corrupt, truncated, unknown format) count as a miss and are removed.
    /// - Throws: decoding errors that are not the data's fault (``OspreyError/DecodingReason/tooLarge(width:height:frames:limitPixels:)``,
    ///   ``OspreyError/DecodingReason/noDecoder(format:)``).
    public func retrieveImage(forKey key: String, processorIdentifier: String = "") async throws(OspreyError) -> ImageCacheResult {
        try await retrieveImage(forKey: key, processorIdentifier: processorIdentifier, options: CacheOptions())
    }

    /// ``retrieveImage(forKey:processorIdentifier:)`` with a request's cache `options` (a disk hit
    /// goes to memory unless `options.storeInMemoryAfterDiskHit` is `false`).
    package func retrieveImage(
        forKey key: String, processorIdentifier: String = "", options: CacheOptions
    ) async throws(OspreyError) -> ImageCacheResult {
        if let image = retrieveImageInMemoryCache(forKey: key, processorIdentifier: processorIdentifier, options: options) {
            return .memory(image)
        }
        guard let image = try await retrieveImageInDiskCache(forKey: key, processorIdentifier: processorIdentifier, options: options) else {
            return .none
        }
        if options.storeInMemoryAfterDiskHit {
            _ = storeInMemory(
                image, computedKey: Self.computedKey(key, processorIdentifier: processorIdentifier), expiration: options.memoryExpiration)
        }
        return .disk(image)
    }

    /// The image in memory, if any (a hit counts as a use and extends its expiration as configured).
    package func retrieveImageInMemoryCache(
        forKey key: String, processorIdentifier: String = "",
        options: CacheOptions = CacheOptions()
    ) -> Image? {
        memoryStorage.value(
            forKey: Self.computedKey(key, processorIdentifier: processorIdentifier),
            extendingExpiration: options.memoryExtendingExpiration)
    }

    /// The image on disk, decoded, if any; does not touch memory. Undecodable bytes are removed.
    package func retrieveImageInDiskCache(
        forKey key: String, processorIdentifier: String = "",
        options: CacheOptions = CacheOptions()
    ) async throws(OspreyError) -> Image? {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        let read = await diskStorage.value(
            forKey: computed, extendingExpiration: options.diskExtendingExpiration, servingExpired: options.servesExpiredFromDisk)
        guard let data = read else {
            return nil
        }
        do throws(OspreyError) {
            return try (options.serializer ?? serializer).image(with: data, options: options.decodingOptions)
        } catch {
            switch error {
            case .decoding(.emptyData), .decoding(.unsupportedFormat), .decoding(.corruptData), .decoding(.truncatedData):
                try? await diskStorage.remove(forKey: computed)
                return nil
            default:
                throw error
            }
        }
    }

    /// Where the image is cached, without loading it: memory first, then disk (a synchronous check
    /// of the disk entry's index). Records no use.
    public func imageCachedType(forKey key: String, processorIdentifier: String = "") -> CacheType {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        if memoryStorage.isCached(forKey: computed) { return .memory }
        if diskStorage.isCached(forKey: computed) { return .disk }
        return .none
    }

    /// Whether the image is cached in memory or on disk.
    package func isCached(forKey key: String, processorIdentifier: String = "") -> Bool {
        imageCachedType(forKey: key, processorIdentifier: processorIdentifier).cached
    }

    /// The path of the disk file for the image (it exists only while the image is cached on disk).
    package func cachePath(forKey key: String, processorIdentifier: String = "") -> String {
        diskStorage.fileURL(forKey: Self.computedKey(key, processorIdentifier: processorIdentifier)).path
    }
}
