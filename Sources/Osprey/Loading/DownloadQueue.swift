/// The downloader's queue of network tasks waiting for a slot: one queue per priority (there are
/// five), each in arrival order, so pushing and popping cost O(1) and never move other entries.
/// The highest non-empty priority goes first; within it the oldest entry (FIFO) or the newest
/// (LIFO).
///
/// Entries are not removed when a task leaves the queue early (its last caller cancelled) or
/// changes priority (a new entry is pushed); the owner skips such stale entries when it pops
/// (see ``ImageDownloader/startQueued(_:)``), and ``compact(keeping:)`` drops them in bulk.
struct DownloadQueue {
    struct Entry {
        let priority: DownloadPriority
        let id: UInt64
        let request: RequestKey
    }

    /// Entries of one priority, oldest first; popped entries before `head` are dropped lazily.
    private struct Bucket {
        var entries: [Entry] = []
        var head = 0

        var count: Int { entries.count - head }

        /// Appends `entry`, or inserts it at its place when an older task is queued again at this
        /// priority (a reprioritised task keeps its place among its peers).
        mutating func insert(_ entry: Entry) {
            guard let last = entries.last, last.id > entry.id else { return entries.append(entry) }
            var low = head, high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].id < entry.id { low = middle + 1 } else { high = middle }
            }
            entries.insert(entry, at: low)
        }

        mutating func popFirst() -> Entry? {
            guard head < entries.count else { return nil }
            let entry = entries[head]
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return entry
        }

        mutating func popLast() -> Entry? {
            guard head < entries.count else { return nil }
            let entry = entries.removeLast()
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
            }
            return entry
        }
    }

    /// Indexed by ``DownloadPriority/rawValue``.
    private var buckets = [Bucket](repeating: Bucket(), count: DownloadPriority.allCases.count)
    let executionOrder: DownloadExecutionOrder

    init(executionOrder: DownloadExecutionOrder) {
        self.executionOrder = executionOrder
    }

    var count: Int { buckets.reduce(0) { $0 + $1.count } }

    /// Queues network task `id` for `request` at `priority`, in id order (the order of arrival).
    mutating func push(id: UInt64, request: RequestKey, priority: DownloadPriority) {
        buckets[priority.rawValue].insert(Entry(priority: priority, id: id, request: request))
    }

    /// Removes and returns the entry that goes first, or `nil` when the queue is empty.
    mutating func pop() -> Entry? {
        for index in buckets.indices.reversed() where buckets[index].count > 0 {
            return executionOrder == .fifo ? buckets[index].popFirst() : buckets[index].popLast()
        }
        return nil
    }

    /// Keeps only the entries `isLive` accepts (drops the stale ones).
    mutating func compact(keeping isLive: (Entry) -> Bool) {
        for index in buckets.indices {
            let live = buckets[index].entries[buckets[index].head...].filter(isLive)
            buckets[index] = Bucket(entries: Array(live), head: 0)
        }
    }
}
