import Foundation

/// ``CachePolicy/revalidate``: revalidating a cached image with its stored validators.
///
/// The validators (ETag, Last-Modified) of a download are kept in the trailer of the disk entries
/// written from it (``DiskEntryFile``'s `meta`): the processed image's and, with
/// ``OriginalStorage/disk``, the original's. A processed entry made from a cached
/// original has none of its own and is revalidated with the original's.
extension ImagePipeline {
    /// Revalidates in the background. `refresh` gets the new result when the server sent new bytes,
    /// `nil` when the cached image is still good (a `304`: its entries are extended) or on failure.
    func startRevalidation(_ request: ResolvedRequest, refresh: (@Sendable (ImageResult?) -> Void)?) {
        Task.detached {
            let result = await self.revalidate(request)
            refresh?(result)
        }
    }

    private func revalidate(_ request: ResolvedRequest) async -> ImageResult? {
        let source = request.source, cache = request.cache
        let key = request.key, identifier = request.processorIdentifier, computed = request.computedKey
        let validator =
            cache.storedValidator(forKey: key, processorIdentifier: identifier)
            ?? request.originalCache.storedValidator(forKey: key, processorIdentifier: "")
        let options = request.options
        guard
            let download = try? await load(
                source, downloader: request.downloader, options: options.downloadOptions(validator: validator))
        else {
            return nil
        }
        if download.isNotModified {
            _ = cache.memoryStorage.value(forKey: computed, extendingExpiration: .cacheTime)
            _ = await cache.diskStorage.value(forKey: computed, extendingExpiration: .cacheTime)
            return nil
        }
        let queue = processingPlace(options)
        guard
            let image = try? await queue.run({ () throws(OspreyError) in
                try self.configuration.decoder.decode(download.data, options: options.decodingOptions, processedBy: options.processor)
            })
        else {
            return nil
        }
        let newValidator = download.response.validator
        if options.storage != .none {
            await cache.store(
                image, original: identifier.isEmpty ? download.data : nil, forKey: key, processorIdentifier: identifier,
                options: options.cacheOptions, toDisk: options.storage.toDisk, validator: newValidator)
        }
        if request.storesOriginalSeparately {
            _ = try? await request.originalCache.storeToDisk(download.data, forKey: key, validator: newValidator)
        }
        return ImageResult(
            image: options.imageModifier?(image) ?? image, cacheType: .none, source: source, originalSource: source,
            data: options.returnsData ? download.data : nil, isRefresh: true)
    }
}
