import Foundation

/// A directory of files, one per entry, with expiration, a size limit that holds, and crash safety.
///
/// The storage itself is ``DiskStorage/Backend``; this namespace holds its ``DiskStorage/Config`` and
/// the reports it produces, in the manner of Kingfisher's `DiskStorage`.
public enum DiskStorage {
    /// The path extension given to entry files.
    public enum FileExtension: Sendable, Hashable {
        /// No extension: the file name is the SHA-256 hex of the key. The default.
        case none
        /// The key's own extension (of its URL path when the key is a URL), lowercased, reduced to
        /// ASCII letters and digits and dropped when longer than 20 characters.
        case fromKey
        /// This extension (sanitised the same way) for every file.
        case forced(String)
    }

    /// How a ``DiskStorage/Backend`` names, limits and expires its entries. Every property has a default.
    public struct Config: Sendable {
        /// The cache's name, the last component of the default directory. Default `"default"`.
        public var name: String
        /// The cache directory itself, used as is. Default `nil`:
        /// `$XDG_CACHE_HOME/osprey/<name>` when `XDG_CACHE_HOME` is an absolute path, else `~/.cache/osprey/<name>`.
        public var directory: URL?
        /// The total size of the entry files, in bytes, above which a store triggers a background
        /// eviction of least recently used entries down to `sizeLimit * trimRatio`. Default 1 GiB; 0 = unlimited.
        public var sizeLimit: Int
        /// The fraction of `sizeLimit` an over-limit eviction brings the total down to. Default 0.8.
        public var trimRatio: Double
        /// The expiration of entries stored without their own. Default `.days(7)`.
        public var expiration: StorageExpiration
        /// What a read does to an entry's expiration. Default ``ExpirationExtending/cacheTime``.
        public var extendingExpiration: ExpirationExtending
        /// The path extension of entry files. Default ``FileExtension/none``.
        public var fileExtension: FileExtension
        /// How old (by modification time) a foreign, unsealed file in the directory (maybe being
        /// written by an older Osprey sharing it) must be before a clean removes it. Reads never
        /// serve such a file and remove it at once. Default 60 s.
        public var recoveryGracePeriod: TimeInterval
        /// How long a hit's access record (and the expiration it extended) may stay in memory only
        /// before it is written to the entry file's times (one `utimensat`, nothing rewritten);
        /// records are also written before every clean and when the storage is deinitialised. LRU
        /// order across restarts and instances is exact to within this interval. Each such write also
        /// rewrites the index snapshot (see ``DiskStorage/Backend``) when the index changed. Default
        /// 60 s; 0 writes at every hit (and removes the snapshot, which would then be older than the files).
        public var accessRecordInterval: TimeInterval
        /// Whether the open-time pass also cleans (stale temporary files, corrupt and old-format
        /// files, size limit) besides building the index. Default `true`; a read-only inspection
        /// (`osprey cache stats`) turns it off.
        public var cleansOnOpen: Bool
        /// The clock used for expiration and last access. Default `Date()`; tests inject their own.
        public var now: @Sendable () -> Date

        /// Makes a configuration; every argument has the default documented on its property.
        public init(
            name: String = "default",
            directory: URL? = nil,
            sizeLimit: Int = 1 << 30,
            trimRatio: Double = 0.8,
            expiration: StorageExpiration = .days(7),
            extendingExpiration: ExpirationExtending = .cacheTime,
            fileExtension: FileExtension = .none,
            recoveryGracePeriod: TimeInterval = 60,
            accessRecordInterval: TimeInterval = 60,
            cleansOnOpen: Bool = true,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.name = name
            self.directory = directory
            self.sizeLimit = sizeLimit
            self.trimRatio = trimRatio
            self.expiration = expiration
            self.extendingExpiration = extendingExpiration
            self.fileExtension = fileExtension
            self.recoveryGracePeriod = recoveryGracePeriod
            self.accessRecordInterval = accessRecordInterval
            self.cleansOnOpen = cleansOnOpen
            self.now = now
        }

        /// The directory the entries live in: `directory` when set, else the default base directory + `name`.
        package var cacheDirectory: URL {
            directory ?? DiskStorage.defaultBaseDirectory().appendingPathComponent(name, isDirectory: true)
        }
    }

    /// `$XDG_CACHE_HOME/osprey` when `XDG_CACHE_HOME` is an absolute path, else `$HOME/.cache/osprey`
    /// (the home directory from `HOME`, else from the user database).
    package static func defaultBaseDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("osprey", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".cache", isDirectory: true)
            .appendingPathComponent("osprey", isDirectory: true)
    }

    /// Why an entry was removed by a clean.
    package enum RemovalReason: String, Sendable, Hashable, Codable {
        /// Its expiration had passed.
        case expired
        /// It was among the least recently used when the total exceeded the size limit.
        case sizeLimit
        /// Its file was not a valid entry (torn, foreign, modified in place, or of an older format).
        case corrupt
    }

    /// One entry a clean removed.
    package struct RemovedEntry: Sendable, Hashable, Codable {
        /// The entry's key (`nil` for a file that was not a valid entry).
        package var key: String?
        /// The entry's data file name inside the cache directory.
        package var fileName: String
        /// The entry's data size in bytes (the file size for a file that was not a valid entry).
        package var size: Int
        /// Why it went.
        package var reason: RemovalReason
    }

    /// What a clean removed. Also delivered to the streams made by `DiskStorage.Backend.cleanEvents()`.
    public struct CleanReport: Sendable, Hashable, Codable {
        /// The removed entries, expired ones first, then corrupt ones, then size-limit evictions (oldest access first).
        package var removed: [RemovedEntry] = []
        /// The total size of the remaining entries after the clean, in bytes.
        public var remainingSize: Int = 0
        /// The number of remaining entries after the clean.
        public var remainingCount: Int = 0

        /// Bytes freed.
        public var removedSize: Int { removed.reduce(0) { $0 + $1.size } }
    }

    /// A snapshot of a disk storage, as computed by ``DiskStorage/Backend/statistics()``.
    package struct Statistics: Sendable, Hashable, Codable {
        /// The cache directory's path.
        package var directory: String
        /// The number of entries (expired ones included).
        package var entryCount: Int
        /// The number of expired entries (still on disk until the next clean).
        package var expiredCount: Int
        /// The summed size of the entries' data (trailers excluded), in bytes.
        package var totalSize: Int
        /// The configured size limit in bytes; 0 = unlimited.
        package var sizeLimit: Int
    }

    /// Sanitises a path extension: lowercased ASCII letters and digits only, `nil` when empty or
    /// longer than 20 characters.
    static func sanitizedExtension(_ raw: String) -> String? {
        let cleaned = String(
            raw.lowercased().unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(Character.init))
        guard !cleaned.isEmpty, cleaned.count <= 20 else { return nil }
        return cleaned
    }

    /// The extension of a key: of its URL path when it parses as a URL with a scheme, else of the
    /// text after the last `/` (query and fragment excluded).
    static func keyExtension(_ key: String) -> String? {
        var path = key
        if let url = URL(string: key), url.scheme != nil {
            path = url.path
        } else if let cut = key.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            path = String(key[..<cut])
        }
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return nil }
        return sanitizedExtension(String(last[last.index(after: dot)...]))
    }
}
