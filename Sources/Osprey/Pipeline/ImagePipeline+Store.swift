import Foundation
import Logging

extension ImagePipeline {
    /// The last step of the deliver stage: stores the processed image, with the download's
    /// validators in its disk entry (the original bytes of ``OriginalStorage/disk``
    /// were stored by the fetch), then finishes `job` with `CacheCallbackCoordinator`'s
    /// timing: after the memory write at once; after the disk writes with
    /// ``CacheWrites/beforeDelivery``, else while they run in the background.
    func store(_ processed: ProcessedImage, fetched: FetchedSource, for job: DeliverJob, _ context: StageContext) {
        let image = processed.image
        let key = context.key, cache = context.cache, originalCache = context.originalCache
        let options = context.options
        let delivered = DeliveredImage(image: image, data: fetched.data, cacheType: fetched.cacheType, decoded: processed.decoded)
        configuration.logger.debug(
            "store",
            metadata: [
                "osprey.key": "\(key)", "osprey.processor": "\(context.request.processorIdentifier)",
                "osprey.storage": "\(context.options.storage)",
                "osprey.cacheWrites": "\(context.options.cacheWrites)"
            ])
        let plan = StorePlan(
            fetched: fetched, identifier: context.request.processorIdentifier, cache: cache,
            originalCache: originalCache, storage: context.options.storage)
        let place = processingPlace(context)
        if context.options.cacheWrites == .beforeDelivery {
            guard plan.needsStore else { return job.finish(.success(delivered)) }
            // The encode and the writes run on the processing queue (in place after a decode or a
            // processor), and go on if every request leaves meanwhile: the entries are complete either way.
            return ProcessingThread.run(on: place) {
                cache.store(
                    image, original: plan.original, forKey: key, processorIdentifier: plan.identifier,
                    options: options.cacheOptions, toDisk: plan.toDisk, validator: plan.validator
                ) { _ in job.finish(.success(delivered)) }
            }
        }
        if plan.needsStore && plan.toDisk, case .threads = place {
            // The pipeline's own threads (``Configuration/processingThreadNice``): the encode and
            // the write wait there, behind the decodes queued before them and below a UI's priority,
            // instead of running as a task at the process's priority. The memory entry is there first.
            let computed = context.request.computedKey, options = options.cacheOptions
            _ = cache.storeInMemory(image, computedKey: computed, expiration: options.memoryExpiration)
            place.async {
                cache.storeOnDisk(
                    image, original: plan.original, computedKey: computed, processorIdentifier: plan.identifier, options: options,
                    validator: plan.validator
                ) { _ in }
            }
        } else if plan.needsStore && plan.toDisk {
            cache.store(
                image, original: plan.original, forKey: key, processorIdentifier: plan.identifier, options: options.cacheOptions,
                toDisk: true, validator: plan.validator, completion: nil)
        } else if plan.needsStore {
            // Memory only: no cache options to build.
            _ = cache.storeInMemory(
                image, computedKey: context.request.computedKey,
                expiration: context.options.memoryCacheExpiration)
        }
        job.finish(.success(delivered))
    }

    /// What a store writes.
    private struct StorePlan {
        var identifier: String
        var toDisk: Bool
        /// An unprocessed image read from the target cache itself needs no new write.
        var needsStore: Bool
        var validator: CacheValidator?
        var original: Data?

        init(fetched: FetchedSource, identifier: String, cache: ImageCache, originalCache: ImageCache, storage: CacheStorage) {
            self.identifier = identifier
            toDisk = storage.toDisk
            needsStore =
                storage != .none && !(identifier.isEmpty && fetched.cacheType != .none && originalCache === cache)
            validator = fetched.cacheType == .none && toDisk ? fetched.validator : nil
            original = identifier.isEmpty ? fetched.data : nil
        }
    }
}
