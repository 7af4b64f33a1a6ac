/// The downloader's queue of network tasks waiting for a slot: a binary heap ordered by priority,
/// then by arrival (FIFO) or reverse arrival (LIFO). Pushing and popping cost O(log n), so starting
/// a task does not scan the queue.
///
/// Entries are not removed when a task leaves the queue early (its last caller cancelled) or
/// changes priority (a new entry is pushed); the owner skips such stale entries when it pops
/// (see ``ImageDownloader/startQueued(_:)``), and ``compact(keeping:)`` drops them in bulk.
struct DownloadQueue {
    struct Entry {
        let priority: DownloadPriority
        /// Lower goes first among equal priorities: the task id (FIFO) or its complement (LIFO).
        let order: UInt64
        let id: UInt64
        let request: RequestKey
    }

    private var heap: [Entry] = []
    let executionOrder: DownloadExecutionOrder

    init(executionOrder: DownloadExecutionOrder) {
        self.executionOrder = executionOrder
    }

    var count: Int { heap.count }

    /// Queues network task `id` for `request` at `priority`.
    mutating func push(id: UInt64, request: RequestKey, priority: DownloadPriority) {
        let order = executionOrder == .fifo ? id : UInt64.max - id
        heap.append(Entry(priority: priority, order: order, id: id, request: request))
        siftUp(heap.count - 1)
    }

    /// Removes and returns the entry that goes first, or `nil` when the queue is empty.
    mutating func pop() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
        return first
    }

    /// Keeps only the entries `isLive` accepts (drops the stale ones) and restores the heap order.
    mutating func compact(keeping isLive: (Entry) -> Bool) {
        heap.removeAll { !isLive($0) }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    /// Whether the entry at `a` goes before the one at `b`. (Compares fields in place: copying an
    /// entry would retain its request's URL and headers.)
    @inline(__always)
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let pa = heap[a].priority, pb = heap[b].priority
        return pa != pb ? pa > pb : heap[a].order < heap[b].order
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, precedes(left, first) { first = left }
            if right < heap.count, precedes(right, first) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
