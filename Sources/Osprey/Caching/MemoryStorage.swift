import Foundation

/// An in-memory, thread-safe key–value store with a cost per value, limits and per-entry expiration.
///
/// The storage itself is ``MemoryStorage/Backend``; this namespace holds its ``MemoryStorage/Config``
/// and ``MemoryStorage/EvictionPolicy``, in the manner of Kingfisher's `MemoryStorage`.
public enum MemoryStorage {
    /// Which entry goes first when a limit is exceeded.
    public enum EvictionPolicy: Sendable, Hashable {
        /// Least recently used: every hit moves the entry to the front. The default.
        case lru
        /// CLOCK (second chance): a hit only sets a reference bit, so a hit never reorders the list;
        /// eviction skips (and clears) referenced entries once before evicting them.
        case clock
    }

    /// How a ``MemoryStorage/Backend`` limits and expires its entries. Every property has a default.
    public struct Config: Sendable {
        /// The total cost the storage holds before evicting. Default:
        /// ``MemoryStorage/Config/defaultTotalCostLimit`` (a quarter of physical memory, at most 1 GiB).
        public var totalCostLimit: Int
        /// The number of entries the storage holds before evicting. Default `Int.max` (unlimited).
        public var countLimit: Int
        /// An entry costing more than `totalCostLimit * entryCostLimitRatio` is rejected with
        /// ``OspreyError/CacheReason/entryTooLarge(key:cost:limit:)``. Default 0.1 (as Nuke);
        /// 1 accepts any entry that fits the total.
        public var entryCostLimitRatio: Double
        /// The expiration of entries stored without their own. Default `.seconds(300)`.
        public var expiration: StorageExpiration
        /// What a read does to an entry's expiration. Default ``ExpirationExtending/cacheTime``.
        public var extendingExpiration: ExpirationExtending
        /// How often a background sweep removes expired entries, in seconds; 0 or less disables it.
        /// Default 120. The sweep holds the storage weakly: it never keeps a released storage alive.
        public var cleanInterval: TimeInterval
        /// Which entry goes first when a limit is exceeded. Default ``EvictionPolicy/lru``.
        public var evictionPolicy: EvictionPolicy
        /// The clock used for expiration. Default: the system's wall clock (read coarsely, to the
        /// few milliseconds, which keeps hits cheap); tests inject their own.
        public var now: @Sendable () -> Date {
            didSet { usesSystemClock = false }
        }
        /// Whether `now` is the default clock, read directly on the hit path without the closure.
        private(set) var usesSystemClock: Bool

        /// A quarter of `ProcessInfo.processInfo.physicalMemory`, capped at 1 GiB.
        public static var defaultTotalCostLimit: Int {
            let quarter = ProcessInfo.processInfo.physicalMemory / 4
            return Int(min(quarter, 1 << 30))
        }

        /// Makes a configuration; every argument has the default documented on its property
        /// (`now: nil` means the system clock).
        public init(
            totalCostLimit: Int = Config.defaultTotalCostLimit,
            countLimit: Int = .max,
            entryCostLimitRatio: Double = 0.1,
            expiration: StorageExpiration = .seconds(300),
            extendingExpiration: ExpirationExtending = .cacheTime,
            cleanInterval: TimeInterval = 120,
            evictionPolicy: EvictionPolicy = .lru,
            now: (@Sendable () -> Date)? = nil
        ) {
            self.totalCostLimit = totalCostLimit
            self.countLimit = countLimit
            self.entryCostLimitRatio = entryCostLimitRatio
            self.expiration = expiration
            self.extendingExpiration = extendingExpiration
            self.cleanInterval = cleanInterval
            self.evictionPolicy = evictionPolicy
            self.now = now ?? { Date(timeIntervalSinceReferenceDate: MemoryStorage.coarseNow()) }
            self.usesSystemClock = now == nil
        }

        /// The largest cost one entry may have: `totalCostLimit * entryCostLimitRatio`.
        package var entryCostLimit: Int {
            let limit = Double(totalCostLimit) * entryCostLimitRatio
            return limit >= Double(Int.max) ? .max : Int(limit)
        }
    }
}

extension MemoryStorage {
    /// The wall clock in seconds since the reference date, from `CLOCK_REALTIME_COARSE`: a few
    /// nanoseconds instead of a full `Date()`, accurate to the kernel tick (a few milliseconds).
    static func coarseNow() -> TimeInterval {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        return TimeInterval(ts.tv_sec) - Date.timeIntervalBetween1970AndReferenceDate + TimeInterval(ts.tv_nsec) / 1e9
    }
}

/// A value that knows what it costs to keep in a ``MemoryStorage/Backend``.
package protocol CacheCostCalculable {
    /// The cost charged against the storage's total cost limit (for an ``Image``, its decoded bytes).
    var cacheCost: Int { get }
}

extension Image: CacheCostCalculable {
    /// The decoded bytes of all frames (``Image/cost``).
    package var cacheCost: Int { cost }
}
