import Foundation

/// Per-call options of ``ImageCache`` operations. Every property has a default.
package struct CacheOptions: Sendable {
    /// The expiration of an image stored in memory; `nil` (the default) uses the memory storage's (300 s).
    package var memoryExpiration: StorageExpiration?
    /// The expiration of bytes stored on disk; `nil` (the default) uses the disk storage's (7 days).
    package var diskExpiration: StorageExpiration?
    /// What a memory hit does to the expiration; `nil` (the default) uses the memory storage's.
    package var memoryExtendingExpiration: ExpirationExtending?
    /// What a disk hit does to the expiration; `nil` (the default) uses the disk storage's.
    package var diskExtendingExpiration: ExpirationExtending?
    /// Whether an image found on disk is put into memory. Default `true`.
    package var storeInMemoryAfterDiskHit: Bool
    /// The serializer for this call; `nil` (the default) uses the cache's.
    package var serializer: (any CacheSerializer)?
    /// How images read from disk are decoded. Default ``DecodingOptions/default``.
    package var decodingOptions: DecodingOptions
    /// Where completion handlers run. Default `DispatchQueue.global()` (Linux programs often do not
    /// run the main queue; pass `.main` when yours does).
    package var callbackQueue: DispatchQueue
    /// Whether an expired disk entry is answered too (and left on disk): the pipeline's disk
    /// lookup while the network is unavailable. Default `false`.
    package var servesExpiredFromDisk: Bool

    /// `DispatchQueue.global()`, made once: each call of `global()` makes a new wrapper object,
    /// and the pipeline builds cache options on every miss.
    static let globalQueue = DispatchQueue.global()

    /// Makes options; every argument has the default documented on its property.
    package init(
        memoryExpiration: StorageExpiration? = nil,
        diskExpiration: StorageExpiration? = nil,
        memoryExtendingExpiration: ExpirationExtending? = nil,
        diskExtendingExpiration: ExpirationExtending? = nil,
        storeInMemoryAfterDiskHit: Bool = true,
        serializer: (any CacheSerializer)? = nil,
        decodingOptions: DecodingOptions = .default,
        callbackQueue: DispatchQueue = .global(),
        servesExpiredFromDisk: Bool = false
    ) {
        self.memoryExpiration = memoryExpiration
        self.diskExpiration = diskExpiration
        self.memoryExtendingExpiration = memoryExtendingExpiration
        self.diskExtendingExpiration = diskExtendingExpiration
        self.storeInMemoryAfterDiskHit = storeInMemoryAfterDiskHit
        self.serializer = serializer
        self.decodingOptions = decodingOptions
        self.callbackQueue = callbackQueue
        self.servesExpiredFromDisk = servesExpiredFromDisk
    }
}
