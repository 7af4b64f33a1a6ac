import Synchronization

/// Per-target request state, kept without associated objects: a table keyed by object identity
/// holding the target weakly, so a target is never kept alive by Osprey and a reused address is
/// recognised. An entry is dropped when its last operation ends.
///
/// User code (a target's image setter, a transition, a completion) never runs under the lock: a
/// callback that set another target, or this one again, would take it a second time. Instead the
/// callbacks of one target run one at a time, in the order they were issued (``serialize(_:_:)``):
/// a result checked as current is applied before the placeholder of a newer request that began
/// after the check, so a stale image never lands over a newer request's.
final class TargetRegistry: Sendable {
    static let shared = TargetRegistry()

    struct Operation {
        var identifier: UInt64
        var task: ImageTask?
        var indicator: (any ImageIndicator)?
    }

    struct Entry {
        weak var target: (any ImageTarget)?
        var operations: [String: Operation] = [:]
    }

    /// A callback waiting for its target's earlier callbacks.
    typealias Callback = @Sendable () -> Void

    struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The targets whose callbacks are running, each with those waiting their turn.
        var running: [ObjectIdentifier: [Callback]] = [:]
    }

    let state = Locked<State>(State())
    private let counter = Atomic<UInt64>(0)

    /// Starts a new operation for `key` on `target`: issues its identifier, runs `prepare` (e.g.
    /// setting the placeholder; at once unless the target's callbacks are running), and returns the
    /// previous operation's task and indicator.
    func begin(
        _ target: any ImageTarget, key: String, indicator: (any ImageIndicator)?,
        prepare: @escaping @Sendable (any ImageTarget) -> Void
    )
        -> (identifier: UInt64, previous: ImageTask?, previousIndicator: (any ImageIndicator)?)
    {
        let identifier = counter.add(1, ordering: .relaxed).newValue
        let previous = state.withLock { state in
            let id = ObjectIdentifier(target)
            var entry = state.entries[id].flatMap { $0.target === target ? $0 : nil } ?? Entry(target: target)
            let previous = entry.operations[key]
            entry.operations[key] = Operation(identifier: identifier, task: nil, indicator: indicator)
            state.entries[id] = entry
            return previous
        }
        serialize(target) { prepare(target) }
        return (identifier, previous?.task, previous?.indicator)
    }

    /// Records the task of the current operation (ignored if the operation was replaced meanwhile).
    func attach(_ task: ImageTask, to target: any ImageTarget, key: String, identifier: UInt64) {
        state.withLock { state in
            let id = ObjectIdentifier(target)
            guard state.entries[id]?.target === target, state.entries[id]?.operations[key]?.identifier == identifier else { return }
            state.entries[id]?.operations[key]?.task = task
        }
    }

    /// Runs `apply` if `identifier` is still the current operation for `key` when the target's
    /// turn comes (when `finish` is set, the operation then ends), then `then` with whether it was.
    /// Both run outside the lock, after the target's earlier callbacks.
    func applyIfCurrent(
        _ target: any ImageTarget, key: String, identifier: UInt64, finish: Bool,
        _ apply: @escaping @Sendable (any ImageTarget) -> Void, then: @escaping @Sendable (Bool) -> Void
    ) {
        serialize(target) { [self] in
            let current = endIfCurrent(target, key: key, identifier: identifier, finish: finish)
            if current { apply(target) }
            then(current)
        }
    }

    /// Whether `identifier` is the current operation for `key`; when `finish` is set, the
    /// operation then ends.
    func endIfCurrent(_ target: any ImageTarget, key: String, identifier: UInt64, finish: Bool) -> Bool {
        state.withLock { state in
            let id = ObjectIdentifier(target)
            guard state.entries[id]?.target === target, state.entries[id]?.operations[key]?.identifier == identifier else { return false }
            if finish {
                state.entries[id]?.operations.removeValue(forKey: key)
                if state.entries[id]?.operations.isEmpty == true { state.entries.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Runs `callback` now, or after the target's callbacks that are running (on this thread or
    /// another) and waiting: one target's callbacks run one at a time, in order, outside the lock.
    /// The caller whose callback finds none running runs the waiting ones too.
    private func serialize(_ target: any ImageTarget, _ callback: @escaping Callback) {
        let id = ObjectIdentifier(target)
        let runsNow = state.withLock { state in
            guard state.running[id] == nil else {
                state.running[id]!.append(callback)
                return false
            }
            state.running[id] = []
            return true
        }
        guard runsNow else { return }
        var next: Callback? = callback
        while let callback = next {
            callback()
            next = state.withLock { state in
                guard let waiting = state.running[id], let first = waiting.first else {
                    state.running[id] = nil
                    return nil
                }
                state.running[id]!.removeFirst()
                return first
            }
        }
    }

    /// Ends the current operation for `key` and returns its task and indicator, to cancel and stop.
    func cancel(_ target: any ImageTarget, key: String) -> (ImageTask?, (any ImageIndicator)?) {
        state.withLock { state in
            let id = ObjectIdentifier(target)
            guard state.entries[id]?.target === target,
                let operation = state.entries[id]?.operations.removeValue(forKey: key)
            else { return (nil, nil) }
            if state.entries[id]?.operations.isEmpty == true { state.entries.removeValue(forKey: id) }
            return (operation.task, operation.indicator)
        }
    }

    /// The identifier of the current operation for `key`, if any.
    func currentIdentifier(_ target: any ImageTarget, key: String) -> UInt64? {
        state.withLock { state in
            let id = ObjectIdentifier(target)
            guard state.entries[id]?.target === target else { return nil }
            return state.entries[id]?.operations[key]?.identifier
        }
    }

    /// Drops the entry of a target that was deallocated while a request ran.
    func removeIfReleased(_ id: ObjectIdentifier) {
        state.withLock { state in
            if let entry = state.entries[id], entry.target == nil { state.entries.removeValue(forKey: id) }
        }
    }
}
