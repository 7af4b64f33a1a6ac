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
    ///   per-node allocations), most recently used at the head. Values are stored as `Value`
    ///   (no existential box, no cast on a hit); an entry's expiration is rewritten on a hit only
    ///   when less than half of its lifetime remains. The read and write paths are pre-specialised
    ///   for ``Image`` (`@_specialize`), so callers in other modules run specialised code too.
    /// - Memory pressure: Linux has no memory-warning notification, so call `trim(toCost:)` or
    ///   ``removeAll()`` yourself.
    public final class Backend<Value: Sendable>: Sendable {
        /// The configuration the storage was made with.
        public let config: Config
        private let state: SharedLocked<MemoryStorageList<Value>>
        private let sweeper = Locked<Task<Void, Never>?>(nil)
        private let entryCostLimit: Int
        /// How many stores there have been (see ``Miss``).
        private let writes = Atomic<UInt64>(0)

        /// Makes an empty storage; starts the expiry sweep unless `config.cleanInterval <= 0`.
        public init(config: Config = Config()) {
            self.config = config
            self.entryCostLimit = config.entryCostLimit
            self.state = SharedLocked(MemoryStorageList<Value>())
            if config.cleanInterval > 0 {
                startSweep(every: config.cleanInterval)
            }
        }

        deinit {
            sweeper.withLock { $0?.cancel() }
        }

        private func startSweep(every interval: TimeInterval) {
            let nanoseconds = UInt64(min(interval, 1e9) * 1e9)
            // The sweep holds the state and the config, never the storage itself: the storage's
            // deinit cancels it. (A weak reference to the storage would give it a side table and
            // make every retain and release of it, on every cache hit, take the slow path.)
            let state = self.state, config = self.config
            let task = Task.detached(priority: .utility) {
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: nanoseconds)
                    guard !Task.isCancelled else { return }
                    let now = Self.currentTime(config)
                    _ = state.withLock { $0.removeExpired(now: now) }
                }
            }
            sweeper.withLock { $0 = task }
        }

        /// The config's clock in seconds since the reference date, without the closure call for the default clock.
        @inline(__always)
        private func currentTime() -> TimeInterval { Self.currentTime(config) }

        @inline(__always)
        private static func currentTime(_ config: Config) -> TimeInterval {
            config.usesSystemClock ? MemoryStorage.coarseNow() : config.now().timeIntervalSinceReferenceDate
        }

        // MARK: Storing

        /// Stores `value` under `key`, charging `cost`, replacing any value already there.
        ///
        /// - Parameters:
        ///   - value: the value to store.
        ///   - key: its key.
        ///   - cost: what it counts against the cost limit (e.g. ``Image/cost``).
        ///   - expiration: the entry's expiration; `nil` (the default) uses the config's. An
        ///     already-expired expiration stores nothing (and removes the key's previous value).
        /// - Throws: ``OspreyError/CacheReason/entryTooLarge(key:cost:limit:)`` when `cost` exceeds
        ///   the per-entry limit; the key's previous value is removed too.
        @_specialize(where Value == Image)
        public func store(_ value: Value, forKey key: String, cost: Int, expiration: StorageExpiration? = nil) throws(OspreyError) {
            let expiration = expiration ?? config.expiration
            let now = currentTime()
            let expiresAt = expiration.expirationTime(from: now)
            let cost = max(0, cost)
            let tooLarge = cost > entryCostLimit
            state.withLock { list in
                guard !tooLarge, expiresAt > now else {
                    if let existing = list.index[key] { list.remove(existing) }
                    return
                }
                // Replaces the key's previous entry, if any, with one hash of the key.
                list.insert(value, key: key, cost: cost, expiration: expiration, expiresAt: expiresAt, now: now)
                list.evict(toCost: config.totalCostLimit, count: config.countLimit, policy: config.evictionPolicy)
            }
            writes.add(1, ordering: .relaxed)
            if tooLarge {
                throw .cache(.entryTooLarge(key: key, cost: cost, limit: entryCostLimit))
            }
        }

        /// A miss, remembered: ``value(forKey:ifStoredSince:)`` looks the key up again only if
        /// something was stored since, so a request that missed and then waits (or joins work)
        /// does not pay for a second lookup that would miss too.
        @usableFromInline
        struct Miss: Sendable {
            /// The number of stores before the lookup that missed. (Read and written with relaxed
            /// ordering: it orders with a store through whatever else orders them, such as a lock
            /// both sides take later.)
            fileprivate let writes: UInt64
        }

        /// What ``lookup(forKey:extendingExpiration:)`` found.
        enum Lookup {
            case hit(Value)
            case miss(Miss)
        }

        /// The value under `key` (as ``value(forKey:extendingExpiration:)``), or the miss.
        @inline(__always)
        func lookup(forKey key: String, extendingExpiration: ExpirationExtending? = nil) -> Lookup {
            let before = Miss(writes: writes.load(ordering: .relaxed))
            if let value = value(forKey: key, extendingExpiration: extendingExpiration) { return .hit(value) }
            return .miss(before)
        }

        /// The value under `key`, looked up only when something was stored since `miss` (`nil`:
        /// always looked up); `nil` when there is none.
        func value(forKey key: String, ifStoredSince miss: Miss?) -> Value? {
            if let miss, miss.writes == writes.load(ordering: .relaxed) { return nil }
            return value(forKey: key)
        }

        // MARK: Reading

        /// The value under `key`, or `nil` when there is none or it has expired (an expired entry is
        /// removed). A hit marks the entry as used and extends its expiration as `extendingExpiration`
        /// says (`nil`, the default, uses the config's).
        @_specialize(where Value == Image)
        public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) -> Value? {
            let now = currentTime()
            let extending = extendingExpiration ?? config.extendingExpiration
            let policy = config.evictionPolicy
            return state.withLock { list -> Value? in
                switch list.lookup(key, now: now, extending: extending, policy: policy) {
                case .miss:
                    return nil
                case .expired(let slot):
                    list.remove(slot)
                    return nil
                case .hit(let slot):
                    return list.nodes[slot].value
                }
            }
        }

        /// Whether an unexpired value is stored under `key`. Does not count as a use.
        @_specialize(where Value == Image)
        package func isCached(forKey key: String) -> Bool {
            let now = currentTime()
            return state.withLock { $0.isLive(key, now: now) }
        }

        /// The keys currently stored (expired or not), most recently used first for LRU,
        /// in list order for CLOCK.
        package var keys: [String] {
            state.withLock { $0.keys }
        }

        // MARK: Removing

        /// Removes the value under `key`, if any.
        @_specialize(where Value == Image)
        public func remove(forKey key: String) {
            state.withLock { list in
                if let slot = list.index[key] { list.remove(slot) }
            }
        }

        /// Removes every entry.
        public func removeAll() {
            state.withLock { $0 = MemoryStorageList<Value>() }
        }

        /// Removes the entries that have expired by the config's clock; returns their keys.
        @discardableResult
        package func removeExpired() -> [String] {
            let now = currentTime()
            return state.withLock { $0.removeExpired(now: now) }
        }

        /// Evicts entries (by the eviction policy) until the total cost is at most `cost`;
        /// returns the number evicted. Use it to react to memory pressure.
        @discardableResult
        package func trim(toCost cost: Int) -> Int {
            state.withLock { $0.evict(toCost: max(0, cost), count: .max, policy: config.evictionPolicy) }
        }

        /// Evicts entries (by the eviction policy) until at most `count` remain; returns the number evicted.
        @discardableResult
        package func trim(toCount count: Int) -> Int {
            state.withLock { $0.evict(toCost: .max, count: max(0, count), policy: config.evictionPolicy) }
        }

        // MARK: Observing

        /// The summed cost of the stored entries.
        public var totalCost: Int { state.withLock { $0.totalCost } }
        /// The number of stored entries (including expired ones the sweep has not removed yet).
        public var count: Int { state.withLock { $0.count } }
    }
}
