import Foundation

/// Where a cached image was found.
public enum CacheType: String, Sendable, Hashable, Codable {
    /// Not cached.
    case none
    /// In the memory storage, decoded.
    case memory
    /// In the disk storage, as bytes.
    case disk

    /// Whether the image is cached anywhere.
    public var cached: Bool { self != .none }
}

/// The outcome of `ImageCache.store(_:original:forKey:processorIdentifier:options:toDisk:)`: the memory
/// and disk results, separately. A failed disk write (read-only or full disk) leaves the memory
/// result untouched.
public struct CacheStoreResult: Sendable {
    /// `.success` when the image is in the memory storage; `.failure` with
    /// ``OspreyError/CacheReason/entryTooLarge(key:cost:limit:)`` when it was rejected.
    public let memoryCacheResult: Result<Void, OspreyError>
    /// `.success` when the bytes are on disk, or when the disk was not asked for (`toDisk: false`);
    /// `.failure` when serializing or writing failed.
    public let diskCacheResult: Result<Void, OspreyError>

    /// Makes a result from its two parts.
    public init(memoryCacheResult: Result<Void, OspreyError>, diskCacheResult: Result<Void, OspreyError>) {
        self.memoryCacheResult = memoryCacheResult
        self.diskCacheResult = diskCacheResult
    }
}

/// The outcome of a lookup in an ``ImageCache``: the image and the storage it came from.
public enum ImageCacheResult: Sendable {
    /// Found decoded in memory.
    case memory(Image)
    /// Found on disk and decoded.
    case disk(Image)
    /// Not found (or found expired or corrupt, which counts as not found).
    case none

    /// The image, when found.
    public var image: Image? {
        switch self {
        case .memory(let image), .disk(let image): image
        case .none: nil
        }
    }

    /// Where the image came from.
    public var cacheType: CacheType {
        switch self {
        case .memory: .memory
        case .disk: .disk
        case .none: .none
        }
    }
}
