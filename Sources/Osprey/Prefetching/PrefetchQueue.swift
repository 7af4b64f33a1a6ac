/// The queue of an ``ImagePrefetcher``: sources waiting, running and stopped, and who listens
/// for their outcomes. A value the prefetcher keeps under its lock; it performs nothing itself
/// (the prefetcher starts requests, cancels tasks and calls listeners outside the lock).
struct PrefetchQueue: Sendable {
    /// Called with a source and what happened to it.
    typealias Listener = @Sendable (ImageSource, ImagePrefetcher.Outcome) -> Void

    /// A source taken off the queue to start; `number` tells this start from a later one of
    /// the same key.
    struct Start: Sendable {
        let key: String
        let source: ImageSource
        let number: Int
    }

    private enum Phase {
        case waiting
        /// Taken off the queue; its task is not known yet (`stopped`: cancel it once it is).
        case starting(stopped: Bool)
        case running(ImageTask)
    }

    private struct Entry {
        var source: ImageSource
        var phase: Phase
        var number: Int
        var listeners: [Listener] = []
    }

    private let limit: Int
    private var waiting: [String] = []
    private var entries: [String: Entry] = [:]
    private var running = 0
    private var numbers = 0
    /// Listeners of keys not queued yet (``listen(key:_:)`` before the start).
    private var early: [String: [Listener]] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether nothing is queued or running.
    var isEmpty: Bool { entries.isEmpty }

    /// Queues `source` under `key` unless it is queued or running already.
    mutating func enqueue(_ source: ImageSource, key: String) {
        guard entries[key] == nil else { return }
        numbers += 1
        entries[key] = Entry(source: source, phase: .waiting, number: numbers, listeners: early.removeValue(forKey: key) ?? [])
        waiting.append(key)
    }

    /// Adds `listener` to the outcome of `key` (queued now or by the next ``enqueue(_:key:)``).
    mutating func listen(key: String, _ listener: @escaping Listener) {
        if entries[key] != nil {
            entries[key]?.listeners.append(listener)
        } else {
            early[key, default: []].append(listener)
        }
    }

    /// The sources to start now, taken off the queue while fewer than the limit run.
    mutating func startable() -> [Start] {
        var starts: [Start] = []
        while running < limit, !waiting.isEmpty {
            let key = waiting.removeFirst()
            guard var entry = entries[key], case .waiting = entry.phase else { continue }
            entry.phase = .starting(stopped: false)
            entries[key] = entry
            running += 1
            starts.append(Start(key: key, source: entry.source, number: entry.number))
        }
        return starts
    }

    /// Records the task of `start`; `true` when it was stopped meanwhile (cancel the task).
    mutating func started(_ start: Start, task: ImageTask) -> Bool {
        guard let entry = entries[start.key], entry.number == start.number, case .starting(let stopped) = entry.phase else { return false }
        entries[start.key]?.phase = .running(task)
        return stopped
    }

    /// Ends `start`: its listeners, to call with its outcome (none when it was already ended).
    mutating func finish(_ start: Start) -> [Listener] {
        guard let entry = entries[start.key], entry.number == start.number else { return [] }
        entries[start.key] = nil
        running -= 1
        return entry.listeners
    }

    /// Stops `keys` (every key when `nil`): the tasks to cancel (their completions end them), and
    /// the waiting sources dropped with their listeners, to tell they were skipped.
    mutating func stop(keys: [String]?) -> (tasks: [ImageTask], dropped: [(ImageSource, [Listener])]) {
        var tasks: [ImageTask] = []
        var dropped: [(ImageSource, [Listener])] = []
        for key in keys ?? Array(entries.keys) {
            guard let entry = entries[key] else { continue }
            switch entry.phase {
            case .waiting:
                entries[key] = nil
                dropped.append((entry.source, entry.listeners))
            case .starting:
                entries[key]?.phase = .starting(stopped: true)
            case .running(let task):
                tasks.append(task)
            }
        }
        if !dropped.isEmpty { waiting.removeAll { entries[$0] == nil } }
        return (tasks, dropped)
    }
}
