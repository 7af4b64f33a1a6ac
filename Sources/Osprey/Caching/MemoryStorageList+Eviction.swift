import Foundation

/// Memory eviction: which entry goes when a ``MemoryStorage/Backend`` is over its cost or count
/// limit (the tail of the list, the least recently used; CLOCK gives referenced entries a second
/// chance). The backend calls ``evict(toCost:count:policy:)`` after every store and trim.
extension MemoryStorageList {
    /// Evicts from the tail until within both limits; returns how many went.
    @discardableResult
    mutating func evict(toCost cost: Int, count: Int, policy: MemoryStorage.EvictionPolicy) -> Int {
        var evicted = 0
        while let slot = victim(toCost: cost, count: count, policy: policy) {
            remove(slot)
            evicted += 1
        }
        return evicted
    }

    /// The next entry to evict while over either limit, or `nil` when within both. For CLOCK,
    /// referenced entries at the tail get a second chance: their bit is cleared and they go to the front.
    mutating func victim(toCost costLimit: Int, count countLimit: Int, policy: MemoryStorage.EvictionPolicy) -> Int? {
        guard tail >= 0, totalCost > costLimit || index.count > countLimit else { return nil }
        var victim = tail
        if policy == .clock {
            while nodes[victim].referenced {
                nodes[victim].referenced = false
                moveToFront(victim)
                victim = tail
            }
        }
        return victim
    }
}
