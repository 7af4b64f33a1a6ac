/// The memory-cache keys of the decoded variants targets were given, by source key: where a
/// target finds another variant of its source to show while the one it asked for loads
/// (``TargetSettings/showsCachedVariantFirst``: a grid's thumbnail in a detail view).
///
/// Only a target's results are recorded (the pipeline's own paths pay nothing). An entry whose
/// image left the memory cache is dropped when it is next looked at; past ``sourceLimit`` sources
/// the index starts again empty, so it never grows without bound.
package final class VariantIndex: Sendable {
    /// The most sources remembered (a few times what a memory cache holds).
    static let sourceLimit = 10_000
    /// The most variants remembered per source.
    static let variantLimit = 8

    private let keys = Locked<[String: [String]]>([:])

    package init() {}

    /// Remembers that `computedKey` (a processed variant's memory-cache key) is a variant of `sourceKey`.
    func record(_ computedKey: String, of sourceKey: String) {
        keys.withLock { keys in
            if keys[sourceKey]?.contains(computedKey) == true { return }
            if keys[sourceKey] == nil, keys.count >= Self.sourceLimit { keys.removeAll(keepingCapacity: true) }
            var variants = keys[sourceKey, default: []]
            if variants.count >= Self.variantLimit { variants.removeFirst() }
            variants.append(computedKey)
            keys[sourceKey] = variants
        }
    }

    /// The largest variant of `sourceKey` other than `computedKey` still in `memory`, or `nil`.
    func largestVariant(of sourceKey: String, except computedKey: String, in memory: MemoryStorage.Backend<Image>) -> Image? {
        let candidates = keys.withLock { $0[sourceKey] } ?? []
        var best: Image?
        var gone: [String] = []
        for key in candidates where key != computedKey {
            guard let image = memory.value(forKey: key, extendingExpiration: ExpirationExtending.none) else {
                gone.append(key)
                continue
            }
            if image.width * image.height > (best.map { $0.width * $0.height } ?? 0) { best = image }
        }
        if !gone.isEmpty {
            keys.withLock { keys in
                let left = keys[sourceKey]?.filter { !gone.contains($0) } ?? []
                keys[sourceKey] = left.isEmpty ? nil : left
            }
        }
        return best
    }
}
