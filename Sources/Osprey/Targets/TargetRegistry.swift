import Synchronization

/// Per-target request state, kept without associated objects: a table keyed by object identity
/// holding the target weakly, so a target is never kept alive by Osprey and a reused address is
/// recognised. An entry is dropped when its last operation ends.
final class TargetRegistry: Sendable {
    static let shared = TargetRegistry()

    private struct Operation {
        var identifier: UInt64
        var task: ImageTask?
        var indicator: (any ImageIndicator)?
    }

    private struct Entry {
        weak var target: (any ImageTarget)?
        var operations: [String: Operation] = [:]
    }

    private let entries = Locked<[ObjectIdentifier: Entry]>([:])
    private let counter = Atomic<UInt64>(0)

    /// Starts a new operation for `key` on `target`: issues its identifier, runs `prepare` (e.g.
    /// setting the placeholder) under the lock, and returns the previous operation's task and indicator.
    func begin(_ target: any ImageTarget, key: String, indicator: (any ImageIndicator)?,
               prepare: (any ImageTarget) -> Void) -> (identifier: UInt64, previous: ImageTask?, previousIndicator: (any ImageIndicator)?) {
        let identifier = counter.add(1, ordering: .relaxed).newValue
        return entries.withLock { entries in
            let id = ObjectIdentifier(target)
            var entry = entries[id].flatMap { $0.target === target ? $0 : nil } ?? Entry(target: target)
            let previous = entry.operations[key]
            entry.operations[key] = Operation(identifier: identifier, task: nil, indicator: indicator)
            entries[id] = entry
            prepare(target)
            return (identifier, previous?.task, previous?.indicator)
        }
    }

    /// Records the task of the current operation (ignored if the operation was replaced meanwhile).
    func attach(_ task: ImageTask, to target: any ImageTarget, key: String, identifier: UInt64) {
        entries.withLock { entries in
            let id = ObjectIdentifier(target)
            guard entries[id]?.target === target, entries[id]?.operations[key]?.identifier == identifier else { return }
            entries[id]?.operations[key]?.task = task
        }
    }

    /// Runs `apply` under the lock if `identifier` is still the current operation for `key`;
    /// when `finish` is set, the operation then ends. Returns whether it was current.
    func applyIfCurrent(_ target: any ImageTarget, key: String, identifier: UInt64, finish: Bool,
                        _ apply: (any ImageTarget) -> Void) -> Bool {
        entries.withLock { entries in
            let id = ObjectIdentifier(target)
            guard entries[id]?.target === target, entries[id]?.operations[key]?.identifier == identifier else { return false }
            apply(target)
            if finish {
                entries[id]?.operations.removeValue(forKey: key)
                if entries[id]?.operations.isEmpty == true { entries.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Ends the current operation for `key` and returns its task and indicator, to cancel and stop.
    func cancel(_ target: any ImageTarget, key: String) -> (ImageTask?, (any ImageIndicator)?) {
        entries.withLock { entries in
            let id = ObjectIdentifier(target)
            guard entries[id]?.target === target, let operation = entries[id]?.operations.removeValue(forKey: key) else { return (nil, nil) }
            if entries[id]?.operations.isEmpty == true { entries.removeValue(forKey: id) }
            return (operation.task, operation.indicator)
        }
    }

    /// The identifier of the current operation for `key`, if any.
    func currentIdentifier(_ target: any ImageTarget, key: String) -> UInt64? {
        entries.withLock { entries in
            let id = ObjectIdentifier(target)
            guard entries[id]?.target === target else { return nil }
            return entries[id]?.operations[key]?.identifier
        }
    }

    /// Drops the entry of a target that was deallocated while a request ran.
    func removeIfReleased(_ id: ObjectIdentifier) {
        entries.withLock { entries in
            if let entry = entries[id], entry.target == nil { entries.removeValue(forKey: id) }
        }
    }

    /// How many targets have an operation running (for tests).
    var activeTargetCount: Int {
        entries.withLock { entries in entries.values.filter { $0.target != nil }.count }
    }

    /// Whether an entry for `id` outlived its target (for tests: released targets leave none).
    func hasReleasedEntry(_ id: ObjectIdentifier) -> Bool {
        entries.withLock { entries in entries[id].map { $0.target == nil } ?? false }
    }
}
