/// A dictionary key hashed once, held by reference. The pipeline's job keys and the downloader's
/// requests are looked up several times each (subscribe and forget; register, assign and finish)
/// and hold strings, URLs and header fields that are costly to hash: hashing them again on each
/// lookup showed as a tenth of a miss. They are also copied into several tables (a request into the
/// task table, the token table, the transfer and the deadline); held in one box, a copy is one
/// retain, not one per string and dictionary inside, and a key compares equal to its own copies
/// without comparing the contents. Equality of distinct boxes still compares the keys themselves.
struct HashedKey<Key: Hashable & Sendable>: Hashable, Sendable {
    private final class Box: Sendable {
        let key: Key
        let hash: Int

        init(_ key: Key) {
            self.key = key
            hash = key.hashValue
        }
    }

    private let box: Box

    init(_ key: Key) {
        box = Box(key)
    }

    /// The key (borrowed from the box, not copied).
    var key: Key { _read { yield box.key } }

    static func == (a: HashedKey, b: HashedKey) -> Bool {
        a.box === b.box || (a.box.hash == b.box.hash && a.box.key == b.box.key)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(box.hash) }
}
