import Foundation

/// ``OspreyOptions/refreshCached``: revalidating a cached image with its stored validators.
///
/// The validators (ETag, Last-Modified) of a downloaded image are stored beside its disk entry, as
/// a small JSON entry under the same source key with the reserved identifier ``validatorIdentifier``.
extension ImagePipeline {
    /// The processor identifier the validators entry of a source key is stored under.
    static let validatorIdentifier = "osprey.validators"

    private struct StoredValidator: Codable {
        var etag: String?
        var lastModified: String?
    }

    func storeValidator(_ validator: CacheValidator, key: String, cache: ImageCache) async {
        guard validator.etag != nil || validator.lastModified != nil,
              let data = try? JSONEncoder().encode(StoredValidator(etag: validator.etag, lastModified: validator.lastModified)) else { return }
        _ = try? await cache.storeToDisk(data, forKey: key, processorIdentifier: Self.validatorIdentifier)
    }

    func storedValidator(key: String, cache: ImageCache) async -> CacheValidator? {
        let computed = ImageCache.computedKey(key, processorIdentifier: Self.validatorIdentifier)
        guard let data = await cache.diskStorage.value(forKey: computed),
              let stored = try? JSONDecoder().decode(StoredValidator.self, from: data) else { return nil }
        return CacheValidator(etag: stored.etag, lastModified: stored.lastModified)
    }

    /// Revalidates in the background. `refresh` gets the new result when the server sent new bytes,
    /// `nil` when the cached image is still good (a `304`: its entries are extended) or on failure.
    func startRevalidation(_ source: ImageSource, key: String, options: OspreyOptions,
                           refresh: (@Sendable (ImageResult?) -> Void)?) {
        Task.detached {
            let result = await self.revalidate(source, key: key, options: options)
            refresh?(result)
        }
    }

    private func revalidate(_ source: ImageSource, key: String, options: OspreyOptions) async -> ImageResult? {
        let cache = options.targetCache ?? configuration.cache
        let identifier = options.processor.identifier
        let computed = ImageCache.computedKey(key, processorIdentifier: identifier)
        let validator = await storedValidator(key: key, cache: cache)
        guard let download = try? await load(source, options: options, validator: validator, progress: { _, _ in }) else {
            return nil
        }
        if download.isNotModified {
            _ = cache.memoryStorage.value(forKey: computed, extendingExpiration: .cacheTime)
            _ = await cache.diskStorage.value(forKey: computed, extendingExpiration: .cacheTime)
            _ = await cache.diskStorage.value(forKey: ImageCache.computedKey(key, processorIdentifier: Self.validatorIdentifier), extendingExpiration: .cacheTime)
            return nil
        }
        let queue = options.processingQueue ?? configuration.processingQueue
        guard let image = try? await Self.run(on: queue, { () throws(OspreyError) in
            try self.configuration.decoder.decode(download.data, options: options.decodingOptions, processedBy: options.processor)
        }) else {
            return nil
        }
        await cache.store(image, original: identifier.isEmpty ? download.data : nil, forKey: key, processorIdentifier: identifier,
                          options: options.cacheOptions, toDisk: !options.cacheMemoryOnly)
        if options.cacheOriginalImage, !identifier.isEmpty, !options.cacheMemoryOnly {
            _ = try? await (options.originalCache ?? cache).storeToDisk(download.data, forKey: key)
        }
        if let newValidator = download.response.validator, !options.cacheMemoryOnly {
            await storeValidator(newValidator, key: key, cache: cache)
        }
        return ImageResult(image: options.imageModifier?(image) ?? image, cacheType: .none, source: source, originalSource: source,
                           data: options.returnsData ? download.data : nil, isRefresh: true)
    }
}
