import Osprey

/// A table by source URL whose entries each keep a time until which they matter. Entries past
/// that time stay readable but are dropped when the table grows, so it stays about as large as
/// the set of entries still within their time, not the set of every URL ever seen; a table with
/// a capacity also drops the entries nearest their time when that set outgrows it.
final class ExpiringTable<Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value
        var until: ContinuousClock.Instant
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Size at which entries past their time are next pruned (doubling while they are all
        /// within it, so pruning costs a constant time per insertion).
        var pruneAt: Int
    }

    private let state: Locked<State>
    private let minimumPruneAt: Int
    private let capacity: Int

    /// A table that first prunes at `pruneAt` entries and holds about `capacity` at most (default:
    /// no limit but the entries' times).
    init(pruneAt: Int = 10_000, capacity: Int = .max) {
        self.capacity = max(2, capacity)
        minimumPruneAt = max(1, min(pruneAt, self.capacity))
        state = Locked(State(pruneAt: minimumPruneAt))
    }

    /// The entries now, pruned or not yet.
    var count: Int { state.withLock { $0.entries.count } }

    func get(_ key: String) -> Value? {
        state.withLock { $0.entries[key]?.value }
    }

    /// Sets `value` under `key`, to be kept at least until `until`; `nil` removes the key.
    func set(_ key: String, _ value: Value?, until: ContinuousClock.Instant) {
        state.withLock { state in
            guard let value else {
                state.entries[key] = nil
                return
            }
            if state.entries.count >= state.pruneAt, state.entries[key] == nil {
                let now = ContinuousClock.now
                state.entries = state.entries.filter { $0.value.until > now }
                if state.entries.count >= capacity {
                    // Still full: keep the half that matters longest.
                    let kept = state.entries.sorted { $0.value.until > $1.value.until }.prefix(capacity / 2)
                    state.entries = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
                }
                state.pruneAt = min(capacity, max(minimumPruneAt, state.entries.count * 2))
            }
            state.entries[key] = Entry(value: value, until: until)
        }
    }
}
