/// A dictionary key hashed once. The pipeline's job keys and the downloader's requests are looked
/// up several times each (subscribe and forget; register, assign and finish) and hold strings, URLs
/// and header fields that are costly to hash: hashing them again on each lookup showed as a tenth
/// of a miss. Equality still compares the keys themselves.
struct HashedKey<Key: Hashable & Sendable>: Hashable, Sendable {
    let key: Key
    private let hash: Int

    init(_ key: Key) {
        self.key = key
        hash = key.hashValue
    }

    static func == (a: HashedKey, b: HashedKey) -> Bool { a.hash == b.hash && a.key == b.key }
    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
