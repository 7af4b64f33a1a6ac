import Foundation

/// The whole mutable state of a memory storage, behind its one lock: key → slot, a node array
/// doubly linked through `prev`/`next` slot indices (head = most recently used), and a free list
/// of slots.
struct MemoryStorageList<Value: Sendable>: Sendable {
    struct Node: Sendable {
        var key: String
        var value: Value?
        var cost: Int
        var expiration: StorageExpiration
        var expiresAt: TimeInterval
        /// When `expiresAt` was last set.
        var storedAt: TimeInterval
        var prev = -1
        var next = -1
        var referenced = false
    }

    enum Lookup {
        case miss
        case expired(Int)
        case hit(Int)
    }

    var index: [String: Int] = [:]
    var nodes: [Node] = []
    var free: [Int] = []
    var head = -1
    var tail = -1
    var totalCost = 0

    var count: Int { index.count }

    /// Finds `key`; on a hit, extends the expiration and records the use.
    mutating func lookup(_ key: String, now: TimeInterval, extending: ExpirationExtending, policy: MemoryStorage.EvictionPolicy) -> Lookup {
        guard let i = index[key] else { return .miss }
        let expiresAt = nodes[i].expiresAt
        if expiresAt <= now { return .expired(i) }
        // Extending rewrites the expiration only once less than half of the entry's lifetime
        // remains (or when the extension is to a different expiration): the entry still lives at
        // least half its lifetime after its last use, and most hits write nothing.
        if let newExpiration = extending.extended(nodes[i].expiration) {
            let lifetime = expiresAt - nodes[i].storedAt
            if newExpiration != nodes[i].expiration || expiresAt - now < lifetime / 2 {
                nodes[i].expiration = newExpiration
                nodes[i].expiresAt = newExpiration.expirationTime(from: now)
                nodes[i].storedAt = now
            }
        }
        switch policy {
        case .lru: moveToFront(i)
        case .clock: nodes[i].referenced = true
        }
        return .hit(i)
    }

    func isLive(_ key: String, now: TimeInterval) -> Bool {
        guard let i = index[key] else { return false }
        return nodes[i].expiresAt > now
    }

    /// The keys from head to tail.
    var keys: [String] {
        var keys: [String] = []
        keys.reserveCapacity(index.count)
        var i = head
        while i >= 0 {
            keys.append(nodes[i].key)
            i = nodes[i].next
        }
        return keys
    }

    /// Removes the entries that have expired at `now`; returns their keys, head to tail.
    mutating func removeExpired(now: TimeInterval) -> [String] {
        expiredSlots(now: now).map { slot in
            let key = nodes[slot].key
            remove(slot)
            return key
        }
    }

    /// The slots whose entries have expired at `now`, head to tail.
    func expiredSlots(now: TimeInterval) -> [Int] {
        var slots: [Int] = []
        var i = head
        while i >= 0 {
            if nodes[i].expiresAt <= now { slots.append(i) }
            i = nodes[i].next
        }
        return slots
    }

    mutating func insert(_ value: Value, key: String, cost: Int, expiration: StorageExpiration, expiresAt: TimeInterval, now: TimeInterval) {
        let node = Node(key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt, storedAt: now)
        let i: Int
        if let slot = free.popLast() {
            i = slot
            nodes[i] = node
        } else {
            i = nodes.count
            nodes.append(node)
        }
        if let replaced = index.updateValue(i, forKey: key) { discard(replaced) }
        totalCost += cost
        pushFront(i)
    }

    mutating func remove(_ i: Int) {
        index[nodes[i].key] = nil
        discard(i)
    }

    /// Frees slot `i`, whose key the index no longer maps to it.
    private mutating func discard(_ i: Int) {
        unlink(i)
        totalCost -= nodes[i].cost
        nodes[i].key = ""
        nodes[i].value = nil
        free.append(i)
    }

    mutating func moveToFront(_ i: Int) {
        guard head != i else { return }
        unlink(i)
        pushFront(i)
    }

    mutating func unlink(_ i: Int) {
        let prev = nodes[i].prev, next = nodes[i].next
        if prev >= 0 { nodes[prev].next = next } else { head = next }
        if next >= 0 { nodes[next].prev = prev } else { tail = prev }
        nodes[i].prev = -1
        nodes[i].next = -1
    }

    mutating func pushFront(_ i: Int) {
        nodes[i].prev = -1
        nodes[i].next = head
        if head >= 0 { nodes[head].prev = i }
        head = i
        if tail < 0 { tail = i }
    }
}
