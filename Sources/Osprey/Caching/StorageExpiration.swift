import Foundation

/// When a cached entry stops being served.
///
/// Used by both ``MemoryStorage`` (default `.seconds(300)`) and ``DiskStorage`` (default `.days(7)`).
/// An entry whose expiration is already in the past when it is stored (`.expired`, `.seconds(0)`,
/// a `.date` before now) is not stored at all.
public enum StorageExpiration: Sendable, Hashable {
    /// The entry never expires (it can still be evicted by a size or count limit).
    case never
    /// The entry expires this many seconds after it is stored (or last extended).
    case seconds(TimeInterval)
    /// The entry expires this many days (of 86 400 s) after it is stored (or last extended).
    case days(Int)
    /// The entry expires at this date, however often it is accessed.
    case date(Date)
    /// The entry is already expired: storing it stores nothing.
    case expired

    /// The moment an entry stored (or extended) at `now` expires; `.distantFuture` for `.never`,
    /// `.distantPast` for `.expired`.
    public func expirationDate(from now: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: expirationTime(from: now.timeIntervalSinceReferenceDate))
    }

    /// Whether an entry stored at `now` with this expiration would already be expired.
    public func isExpired(at now: Date) -> Bool {
        expirationTime(from: now.timeIntervalSinceReferenceDate) <= now.timeIntervalSinceReferenceDate
    }

    /// `expirationDate(from:)` in seconds since the reference date; `±infinity` for `.never`/`.expired`.
    func expirationTime(from now: TimeInterval) -> TimeInterval {
        switch self {
        case .never: .infinity
        case .seconds(let seconds): now + seconds
        case .days(let days): now + Double(days) * 86_400
        case .date(let date): date.timeIntervalSinceReferenceDate
        case .expired: -.infinity
        }
    }
}

/// What reading an entry does to its expiration.
///
/// Both storages default to ``cacheTime``, as Kingfisher does.
public enum ExpirationExtending: Sendable, Hashable {
    /// Reading leaves the expiration as it is.
    case none
    /// Reading restarts the entry's own expiration from now (an entry stored for 300 s lives
    /// another 300 s after each read; `.date` and `.never` are unchanged). The memory storage
    /// restarts it only once less than half of the lifetime is left, so a hit usually writes
    /// nothing and an entry always lives at least half its lifetime after its last read.
    case cacheTime
    /// Reading replaces the entry's expiration with this one, counted from now.
    case expirationTime(StorageExpiration)

    /// The entry's expiration after a read, given the expiration it had.
    func extended(_ current: StorageExpiration) -> StorageExpiration? {
        switch self {
        case .none: nil
        case .cacheTime: current
        case .expirationTime(let replacement): replacement
        }
    }
}
