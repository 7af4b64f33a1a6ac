import Crypto
import Foundation
import Osprey

/// Encoded results, in memory (``MemoryStorage``) and on disk (``DiskStorage``), keyed by source +
/// processing + output format (or the negotiation offer). Each entry keeps its format, a strong
/// ETag (SHA-256 of the bytes) and its creation time (`Last-Modified`).
final class ResultCache: Sendable {
    /// One encoded result.
    struct Entry: Sendable {
        var data: Data
        var format: ImageFormat
        var etag: String
        let created: Date
        /// `created` as an HTTP date, formatted once for every answer the entry gives.
        let lastModified: String
        /// What the origin's `Cache-Control` allows (default: nothing said).
        var policy = OriginPolicy()

        init(data: Data, format: ImageFormat, created: Date = Date()) {
            self.data = data
            self.format = format
            let digest = SHA256.hash(data: data).withUnsafeBytes { Hex.lowercase(UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
            etag = "\"\(digest)\""
            self.created = Date(timeIntervalSince1970: created.timeIntervalSince1970.rounded(.down))
            lastModified = HTTPDate.format(self.created)
        }
    }

    private let memory: MemoryStorage.Backend<Entry>
    private let disk: DiskStorage.Backend?

    /// Caches of `memoryBytes` and (under `directory/results`) `diskBytes`, whose entries live
    /// `lifetime` seconds from when they were made (the origin TTL: after it, the source is
    /// fetched again, so a changed source is picked up).
    init(memoryBytes: Int, directory: URL?, diskBytes: Int, lifetime: TimeInterval) {
        memory = MemoryStorage.Backend(
            config: MemoryStorage.Config(
                totalCostLimit: memoryBytes, expiration: .seconds(lifetime),
                extendingExpiration: .none))
        disk = directory.map {
            DiskStorage.Backend(
                config: DiskStorage.Config(
                    name: "results", directory: $0.appendingPathComponent("results"), sizeLimit: diskBytes,
                    expiration: .seconds(lifetime), extendingExpiration: .none))
        }
    }

    /// The entry under `key` in memory, without looking on disk.
    func memoryValue(_ key: String) -> Entry? {
        memory.value(forKey: key)
    }

    /// The entry under `key` and the level it came from (`result_memory` or `result_disk`).
    func lookup(_ key: String) async -> (Entry, level: String)? {
        if let entry = memoryValue(key) { return (entry, "result_memory") }
        guard let disk, let stored = await disk.value(forKey: key), let entry = Self.decode(stored) else { return nil }
        try? memory.store(entry, forKey: key, cost: Self.cost(of: entry, key: key))
        return (entry, "result_disk")
    }

    /// Stores `entry` under `key` in both levels for `lifetime` seconds.
    func store(_ entry: Entry, forKey key: String, lifetime: TimeInterval) async {
        try? memory.store(entry, forKey: key, cost: Self.cost(of: entry, key: key), expiration: .seconds(lifetime))
        try? await disk?.store(Self.encode(entry), forKey: key, expiration: .seconds(lifetime))
    }

    /// What an entry holds in memory besides its bytes: its ETag and date strings, the bytes' box,
    /// the storage's node and index slot (an estimate, rounded up).
    static let entryOverhead = 256

    /// The memory `entry` under `key` takes, charged against the memory limit: with many small
    /// results, their bytes alone would undercount it.
    static func cost(of entry: Entry, key: String) -> Int {
        entry.data.count + key.utf8.count + entryOverhead
    }

    /// The summed cost of the entries in memory.
    var memoryCost: Int { memory.totalCost }
    /// The memory level's limit on that cost.
    var memoryLimit: Int { memory.config.totalCostLimit }

    /// Waits for disk writes to land (tests).
    func flush() async { await disk?.waitForPendingWork() }

    /// On disk: `format created max-age private\n` then the bytes (`max-age` `-1`: none).
    static func encode(_ entry: Entry) -> Data {
        let header =
            "\(entry.format.rawValue) \(Int(entry.created.timeIntervalSince1970)) \(entry.policy.maxAge ?? -1) \(entry.policy.isPrivate ? 1 : 0)\n"
        return Data(header.utf8) + entry.data
    }

    static func decode(_ stored: Data) -> Entry? {
        guard let newline = stored.firstIndex(of: 0x0A),
            let header = String(data: stored[stored.startIndex..<newline], encoding: .utf8)
        else { return nil }
        let fields = header.split(separator: " ")
        guard fields.count == 4, let format = ImageFormat(rawValue: String(fields[0])), let seconds = Double(fields[1]),
            let maxAge = Int(fields[2])
        else { return nil }
        var entry = Entry(data: Data(stored[stored.index(after: newline)...]), format: format, created: Date(timeIntervalSince1970: seconds))
        entry.policy = OriginPolicy(isPrivate: fields[3] == "1", maxAge: maxAge < 0 ? nil : maxAge)
        return entry
    }
}
