import Foundation
import Synchronization

extension MemoryStorage {
    /// A thread-safe in-memory store of `Value`s under `String` keys, with a cost per value.
    ///
    /// - Limits: ``MemoryStorage/Config/totalCostLimit``, ``MemoryStorage/Config/countLimit`` and a
    ///   per-entry cost limit. Storing past a limit evicts by the configured ``MemoryStorage/EvictionPolicy``
    ///   (LRU by default) until the storage is back within its limits.
    /// - Expiration: per entry (default from the config, 300 s), checked on every read and by a
    ///   periodic sweep (every 120 s by default). Reads extend it as configured.
    /// - Cost of a hit: one lock acquisition, one dictionary lookup and O(1) list relinking. Entries
    ///   live in a contiguous array of nodes linked by indices (a doubly linked list without
    ///   per-node allocations), most recently used at the head.
    /// - Memory pressure: Linux has no memory-warning notification, so call ``trim(toCost:)`` or
    ///   ``removeAll()`` yourself.
    public final class Backend<Value: Sendable>: Sendable {
        /// The configuration the storage was made with.
        public let config: Config
        private let state: Mutex<State>
        private let sweeper = Mutex<Task<Void, Never>?>(nil)
        private let entryCostLimit: Int

        /// Makes an empty storage; starts the expiry sweep unless `config.cleanInterval <= 0`.
        public init(config: Config = Config()) {
            self.config = config
            self.entryCostLimit = config.entryCostLimit
            self.state = Mutex(State())
            if config.cleanInterval > 0 {
                startSweep(every: config.cleanInterval)
            }
        }

        deinit {
            sweeper.withLock { $0?.cancel() }
        }

        private func startSweep(every interval: TimeInterval) {
            let nanoseconds = UInt64(min(interval, 1e9) * 1e9)
            let task = Task.detached(priority: .utility) { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: nanoseconds)
                    // A strong reference only for the duration of one sweep, never across the sleep.
                    guard !Task.isCancelled, let storage = self else { return }
                    storage.removeExpired()
                }
            }
            sweeper.withLock { $0 = task }
        }

        // MARK: Storing

        /// Stores `value` under `key`, charging `cost`, replacing any value already there.
        ///
        /// - Parameter expiration: the entry's expiration; `nil` (the default) uses the config's.
        ///   An already-expired expiration stores nothing (and removes the key's previous value).
        /// - Throws: ``OspreyError/CacheReason/entryTooLarge(key:cost:limit:)`` when `cost` exceeds
        ///   the per-entry limit; the key's previous value is removed too.
        public func store(_ value: Value, forKey key: String, cost: Int, expiration: StorageExpiration? = nil) throws(OspreyError) {
            let expiration = expiration ?? config.expiration
            let now = config.now().timeIntervalSinceReferenceDate
            let expiresAt = expiration.expirationTime(from: now)
            let cost = max(0, cost)
            let tooLarge = cost > entryCostLimit
            state.withLock { state in
                if let existing = state.index[key] {
                    state.remove(existing)
                }
                guard !tooLarge, expiresAt > now else { return }
                state.insert(Node(key: key, value: value, cost: cost, expiration: expiration, expiresAt: expiresAt))
                state.evict(toCost: config.totalCostLimit, count: config.countLimit, policy: config.evictionPolicy)
            }
            if tooLarge {
                throw .cache(.entryTooLarge(key: key, cost: cost, limit: entryCostLimit))
            }
        }

        // MARK: Reading

        /// The value under `key`, or `nil` when there is none or it has expired (an expired entry is
        /// removed). A hit marks the entry as used and extends its expiration as `extendingExpiration`
        /// says (`nil`, the default, uses the config's).
        public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) -> Value? {
            let now = config.now().timeIntervalSinceReferenceDate
            let extending = extendingExpiration ?? config.extendingExpiration
            let policy = config.evictionPolicy
            return state.withLock { state -> Value? in
                guard let i = state.index[key] else { return nil }
                if state.nodes[i].expiresAt <= now {
                    state.remove(i)
                    return nil
                }
                if let newExpiration = extending.extended(state.nodes[i].expiration) {
                    state.nodes[i].expiration = newExpiration
                    state.nodes[i].expiresAt = newExpiration.expirationTime(from: now)
                }
                switch policy {
                case .lru: state.moveToFront(i)
                case .clock: state.nodes[i].referenced = true
                }
                return state.nodes[i].value
            }
        }

        /// Whether an unexpired value is stored under `key`. Does not count as a use.
        public func isCached(forKey key: String) -> Bool {
            let now = config.now().timeIntervalSinceReferenceDate
            return state.withLock { state in
                guard let i = state.index[key] else { return false }
                return state.nodes[i].expiresAt > now
            }
        }

        /// The keys currently stored (expired or not), most recently used first for LRU,
        /// in list order for CLOCK.
        public var keys: [String] {
            state.withLock { state in
                var keys: [String] = []
                keys.reserveCapacity(state.index.count)
                var i = state.head
                while i >= 0 {
                    keys.append(state.nodes[i].key)
                    i = state.nodes[i].next
                }
                return keys
            }
        }

        // MARK: Removing

        /// Removes the value under `key`, if any.
        public func remove(forKey key: String) {
            state.withLock { state in
                if let i = state.index[key] { state.remove(i) }
            }
        }

        /// Removes every entry.
        public func removeAll() {
            state.withLock { $0 = State() }
        }

        /// Removes the entries that have expired by the config's clock; returns their keys.
        @discardableResult
        public func removeExpired() -> [String] {
            let now = config.now().timeIntervalSinceReferenceDate
            return state.withLock { state in
                var removed: [String] = []
                var i = state.head
                while i >= 0 {
                    let next = state.nodes[i].next
                    if state.nodes[i].expiresAt <= now {
                        removed.append(state.nodes[i].key)
                        state.remove(i)
                    }
                    i = next
                }
                return removed
            }
        }

        /// Evicts entries (by the eviction policy) until the total cost is at most `cost`;
        /// returns the number evicted. Use it to react to memory pressure.
        @discardableResult
        public func trim(toCost cost: Int) -> Int {
            state.withLock { $0.evict(toCost: max(0, cost), count: .max, policy: config.evictionPolicy) }
        }

        /// Evicts entries (by the eviction policy) until at most `count` remain; returns the number evicted.
        @discardableResult
        public func trim(toCount count: Int) -> Int {
            state.withLock { $0.evict(toCost: .max, count: max(0, count), policy: config.evictionPolicy) }
        }

        // MARK: Observing

        /// The summed cost of the stored entries.
        public var totalCost: Int { state.withLock { $0.totalCost } }
        /// The number of stored entries (including expired ones the sweep has not removed yet).
        public var count: Int { state.withLock { $0.index.count } }
    }
}

// MARK: - Index-linked list

extension MemoryStorage.Backend {
    struct Node {
        var key: String
        var value: Value?
        var cost: Int
        var expiration: StorageExpiration
        var expiresAt: TimeInterval
        var prev = -1
        var next = -1
        var referenced = false
    }

    /// The whole mutable state, behind one lock: key → node index, the node array (a doubly linked
    /// list through `prev`/`next` indices, head = most recent) and a free list of node slots.
    struct State {
        var index: [String: Int] = [:]
        var nodes: [Node] = []
        var free: [Int] = []
        var head = -1
        var tail = -1
        var totalCost = 0

        mutating func insert(_ node: Node) {
            let i: Int
            if let slot = free.popLast() {
                i = slot
                nodes[i] = node
            } else {
                i = nodes.count
                nodes.append(node)
            }
            index[node.key] = i
            totalCost += node.cost
            pushFront(i)
        }

        mutating func remove(_ i: Int) {
            unlink(i)
            index[nodes[i].key] = nil
            totalCost -= nodes[i].cost
            nodes[i].value = nil
            nodes[i].key = ""
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

        /// Evicts from the tail until within both limits; returns how many went.
        @discardableResult
        mutating func evict(toCost costLimit: Int, count countLimit: Int, policy: MemoryStorage.EvictionPolicy) -> Int {
            var evicted = 0
            while tail >= 0, totalCost > costLimit || index.count > countLimit {
                var victim = tail
                if policy == .clock {
                    // Second chance: referenced entries go back to the front with their bit cleared.
                    while nodes[victim].referenced {
                        nodes[victim].referenced = false
                        moveToFront(victim)
                        victim = tail
                    }
                }
                remove(victim)
                evicted += 1
            }
            return evicted
        }
    }
}
