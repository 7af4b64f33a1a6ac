import Foundation

/// The in-memory index of a ``DiskStorage/Backend``: for each entry file (by the SHA-256 hex of its
/// key) what the size limit, expiry and LRU order need, so that none of them touches the disk.
///
/// Its persistent form is the entry files themselves (their trailers and times, see
/// ``DiskEntryFile``), with a copy in ``DiskIndexSnapshot`` to avoid reading them all at open: it is
/// rebuilt from them at open and re-synchronised with the directory as ``DiskStorage/Backend`` documents.
struct DiskEntryIndex: Sendable {
    struct Entry: Sendable, Equatable {
        var fileName: String
        var inode: UInt64
        var key: String
        var size: Int
        var created: TimeInterval
        var policy: StorageExpiration
        /// Absolute expiry in whole seconds since 1970 (the sealed mtime); `nil` = never.
        var expires: TimeInterval?
        var lastAccess: TimeInterval
        /// Whether `lastAccess`/`expires` changed since they were last written to the file's times.
        var dirty = false
        /// Whether this instance has checked the file's trailer checksum (`false` for a record taken
        /// from the index snapshot: its first read verifies it).
        var verified = true

        func isExpired(at now: TimeInterval) -> Bool {
            guard let expires else { return false }
            return expires <= now
        }

        init(
            fileName: String, inode: UInt64, key: String, size: Int, created: TimeInterval, policy: StorageExpiration,
            expires: TimeInterval?, lastAccess: TimeInterval
        ) {
            self.fileName = fileName
            self.inode = inode
            self.key = key
            self.size = size
            self.created = created
            self.policy = policy
            self.expires = expires
            self.lastAccess = lastAccess
        }

        /// The entry a file holds, from its trailer and its times.
        init(fileName: String, file: DiskEntryFile, info: DiskFileIO.FileInfo) {
            self.init(
                fileName: fileName, inode: info.inode, key: file.key, size: file.dataSize, created: file.created,
                policy: file.policy, expires: DiskEntryFile.expiry(sealSeconds: info.mtimeSeconds), lastAccess: info.accessed)
        }
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var totalSize = 0
    private(set) var dirtyHashes: Set<String> = []
    /// Bumped by every change a snapshot would show (not by the dirty flags): tells whether the
    /// snapshot on disk is still current.
    private(set) var generation = 0

    var count: Int { entries.count }

    subscript(hash: String) -> Entry? { entries[hash] }

    /// Adds or replaces the entry of `hash`; returns the one it replaced.
    @discardableResult
    mutating func insert(_ entry: Entry, hash: String) -> Entry? {
        let previous = entries.updateValue(entry, forKey: hash)
        generation += 1
        totalSize += entry.size - (previous?.size ?? 0)
        if entry.dirty { dirtyHashes.insert(hash) } else if previous?.dirty == true { dirtyHashes.remove(hash) }
        return previous
    }

    @discardableResult
    mutating func remove(_ hash: String) -> Entry? {
        guard let previous = entries.removeValue(forKey: hash) else { return nil }
        generation += 1
        totalSize -= previous.size
        if previous.dirty { dirtyHashes.remove(hash) }
        return previous
    }

    /// Removes the entry of `hash` only if it is still the file `inode` (not replaced meanwhile).
    @discardableResult
    mutating func remove(_ hash: String, ifInode inode: UInt64) -> Entry? {
        guard entries[hash]?.inode == inode else { return nil }
        return remove(hash)
    }

    /// Records a hit on the file `inode` of `hash`: its last access and (when `extended`) its new
    /// expiry, in memory. Returns the updated entry, `nil` when the index holds another file.
    mutating func touch(_ hash: String, inode: UInt64, at now: TimeInterval, extendedTo expires: TimeInterval??, policy: StorageExpiration?) -> Entry?
    {
        guard var entry = entries[hash], entry.inode == inode else { return nil }
        entry.lastAccess = now
        generation += 1
        // Only called after a read that parsed the file (checksum included when it was unverified).
        entry.verified = true
        if let expires { entry.expires = expires }
        if let policy { entry.policy = policy }
        entry.dirty = true
        entries[hash] = entry
        dirtyHashes.insert(hash)
        return entry
    }

    /// Sets the expiry of the entry of `hash` to what its file `inode` says (another instance extended it).
    mutating func setExpiry(_ hash: String, inode: UInt64, _ expires: TimeInterval?) {
        guard var entry = entries[hash], entry.inode == inode else { return }
        entry.expires = expires
        entries[hash] = entry
        generation += 1
    }

    /// Marks the entry of `hash` as written (when it is still the file `inode`).
    mutating func markClean(_ hash: String, inode: UInt64) {
        guard var entry = entries[hash], entry.inode == inode, entry.dirty else { return }
        entry.dirty = false
        entries[hash] = entry
        dirtyHashes.remove(hash)
    }

    /// The dirty entries, now marked clean (the caller writes their times).
    mutating func takeDirty() -> [Entry] {
        var taken: [Entry] = []
        taken.reserveCapacity(dirtyHashes.count)
        for hash in dirtyHashes {
            guard var entry = entries[hash] else { continue }
            entry.dirty = false
            entries[hash] = entry
            taken.append(entry)
        }
        dirtyHashes.removeAll(keepingCapacity: true)
        return taken
    }

    mutating func removeAll() {
        generation += 1
        entries.removeAll()
        totalSize = 0
        dirtyHashes.removeAll()
    }

    /// The positions in ``all`` of every entry, oldest access first (creation breaks ties). Sorts
    /// plain values, not the entries: moving those retains and releases their strings.
    func positionsByLastAccess() -> [Dictionary<String, Entry>.Index] {
        var order: [(lastAccess: TimeInterval, created: TimeInterval, position: Dictionary<String, Entry>.Index)] = []
        order.reserveCapacity(entries.count)
        for position in entries.indices {
            let entry = entries.values[position]
            order.append((entry.lastAccess, entry.created, position))
        }
        order.sort { ($0.lastAccess, $0.created) < ($1.lastAccess, $1.created) }
        return order.map(\.position)
    }

    var hashes: Dictionary<String, Entry>.Keys { entries.keys }

    /// Every entry by hash (a copy-on-write value: cheap to take under the lock).
    var all: [String: Entry] { entries }
}
