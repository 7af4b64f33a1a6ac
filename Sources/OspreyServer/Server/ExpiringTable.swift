import Osprey

/// A table by source URL whose entries each keep a time until which they matter. Entries past
/// that time stay readable but are dropped when the table grows, so it stays about as large as
/// the set of entries still within their time, not the set of every URL ever seen.
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

    /// A table that first prunes at `pruneAt` entries.
    init(pruneAt: Int = 10_000) {
        minimumPruneAt = max(1, pruneAt)
        state = Locked(State(pruneAt: max(1, pruneAt)))
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
                state.pruneAt = max(minimumPruneAt, state.entries.count * 2)
            }
            state.entries[key] = Entry(value: value, until: until)
        }
    }
}
