import Foundation

/// Removing, clearing and cleaning an ``ImageCache``.
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

    /// Removes every image from memory.
    public func clearMemoryCache() {
        memoryStorage.removeAll()
    }

    /// Removes every image from disk.
    /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)``.
    public func clearDiskCache() async throws(OspreyError) {
        try await diskStorage.removeAll()
    }

    /// Removes expired images from memory; returns their computed keys.
    @discardableResult
    package func cleanExpiredMemoryCache() -> [String] {
        memoryStorage.removeExpired()
    }

    /// Removes expired (and inconsistent) entries from disk, then least recently used ones while over
    /// the size limit; returns what went (also published on `DiskStorage.Backend.cleanEvents()`).
    @discardableResult
    package func cleanExpiredDiskCache() async -> DiskStorage.CleanReport {
        await diskStorage.clean()
    }

    /// Cleans memory (`cleanExpiredMemoryCache()`) and disk (`cleanExpiredDiskCache()`, with the
    /// size pass); returns the disk report.
    @discardableResult
    public func cleanExpiredCache() async -> DiskStorage.CleanReport {
        cleanExpiredMemoryCache()
        return await cleanExpiredDiskCache()
    }

    /// The total size of the images on disk, in bytes, from a scan of the directory.
    public func diskStorageSize() async -> Int {
        await diskStorage.totalSize()
    }
}
