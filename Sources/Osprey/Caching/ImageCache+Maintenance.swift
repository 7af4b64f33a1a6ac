import Foundation

/// Removing, clearing and cleaning an ``ImageCache``, in async and completion-handler forms.
extension ImageCache {
    /// Removes the image from memory and/or disk (both by default).
    /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)``.
    public func removeImage(
        forKey key: String, processorIdentifier: String = "",
        fromMemory: Bool = true, fromDisk: Bool = true
    ) async throws(OspreyError) {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        if fromMemory { memoryStorage.remove(forKey: computed) }
        if fromDisk { try await diskStorage.remove(forKey: computed) }
    }

    /// ``removeImage(forKey:processorIdentifier:fromMemory:fromDisk:)`` with a completion handler
    /// (may be `nil`) called on `callbackQueue` (default `DispatchQueue.global()`); memory is cleared before returning.
    public func removeImage(
        forKey key: String, processorIdentifier: String = "", fromMemory: Bool = true, fromDisk: Bool = true,
        callbackQueue: DispatchQueue = .global(),
        completion: (@Sendable (Result<Void, OspreyError>) -> Void)?
    ) {
        let computed = Self.computedKey(key, processorIdentifier: processorIdentifier)
        if fromMemory { memoryStorage.remove(forKey: computed) }
        run(callbackQueue, completion) { () async throws(OspreyError) in
            if fromDisk { try await self.diskStorage.remove(forKey: computed) }
        }
    }

    /// Removes every image from memory.
    public func clearMemoryCache() {
        memoryStorage.removeAll()
    }

    /// Removes every image from disk.
    /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)``.
    public func clearDiskCache() async throws(OspreyError) {
        try await diskStorage.removeAll()
    }

    /// ``clearDiskCache()`` with a completion handler (may be `nil`) on `callbackQueue` (default `DispatchQueue.global()`).
    public func clearDiskCache(callbackQueue: DispatchQueue = .global(), completion: (@Sendable (Result<Void, OspreyError>) -> Void)?) {
        run(callbackQueue, completion) { () async throws(OspreyError) in try await self.diskStorage.removeAll() }
    }

    /// Removes expired images from memory; returns their computed keys.
    @discardableResult
    public func cleanExpiredMemoryCache() -> [String] {
        memoryStorage.removeExpired()
    }

    /// Removes expired (and inconsistent) entries from disk, then least recently used ones while over
    /// the size limit; returns what went (also published on ``DiskStorage/Backend/cleanEvents()``).
    @discardableResult
    public func cleanExpiredDiskCache() async -> DiskStorage.CleanReport {
        await diskStorage.clean()
    }

    /// Cleans memory (``cleanExpiredMemoryCache()``) and disk (``cleanExpiredDiskCache()``, with the
    /// size pass); returns the disk report.
    @discardableResult
    public func cleanExpiredCache() async -> DiskStorage.CleanReport {
        cleanExpiredMemoryCache()
        return await cleanExpiredDiskCache()
    }

    /// ``cleanExpiredCache()`` with a completion handler (may be `nil`) on `callbackQueue` (default `DispatchQueue.global()`).
    public func cleanExpiredCache(callbackQueue: DispatchQueue = .global(), completion: (@Sendable (DiskStorage.CleanReport) -> Void)?) {
        Task {
            let report = await cleanExpiredCache()
            if let completion { callbackQueue.async { completion(report) } }
        }
    }

    /// The total size of the images on disk, in bytes, from a scan of the directory.
    public func diskStorageSize() async -> Int {
        await diskStorage.totalSize()
    }

    /// ``diskStorageSize()`` with a completion handler on `callbackQueue` (default `DispatchQueue.global()`).
    public func diskStorageSize(callbackQueue: DispatchQueue = .global(), completion: @escaping @Sendable (Int) -> Void) {
        Task {
            let size = await diskStorageSize()
            callbackQueue.async { completion(size) }
        }
    }

    private func run(
        _ queue: DispatchQueue, _ completion: (@Sendable (Result<Void, OspreyError>) -> Void)?,
        _ work: @escaping @Sendable () async throws(OspreyError) -> Void
    ) {
        Task {
            let result: Result<Void, OspreyError>
            do throws(OspreyError) {
                try await work()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            if let completion { queue.async { completion(result) } }
        }
    }
}
