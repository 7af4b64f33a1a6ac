import Foundation

extension ImageDownloader {
    /// The deadline of a running network task.
    struct Deadline {
        var at: ContinuousClock.Instant
        var request: RequestKey
        var timedOut = false
    }

    /// The one watchdog task of a downloader, which cancels running tasks past their deadline.
    struct Watchdog {
        var task: Task<Void, Never>?
        /// When it wakes next; a new deadline before this replaces it.
        var wake: ContinuousClock.Instant?
        var generation: UInt64 = 0
    }

    /// The timeout of `request`: its own, else the configuration's.
    func timeout(of request: DownloadRequest) -> Duration {
        request.timeout ?? configuration.timeout
    }

    /// Registers the deadline of running task `id`. Timeouts cost one dictionary entry per
    /// download and one sleeping task per downloader (while anything runs), not a timer each.
    /// Called with the lock held, when a worker's transfer turns out to need waiting (``finishImmediately(_:worker:)``); ``finish(id:request:outcome:metrics:worker:)``
    /// removes the deadline.
    func armTimeout(_ state: inout State, id: UInt64, request: RequestKey) {
        let deadline = ContinuousClock.now + timeout(of: request.request)
        state.deadlines[id] = Deadline(at: deadline, request: request)
        // `wake` is set exactly while a watchdog runs.
        if let wake = state.watchdog.wake, wake <= deadline { return }
        state.watchdog.task?.cancel()
        state.watchdog.generation += 1
        state.watchdog.wake = deadline
        let generation = state.watchdog.generation
        // Holds the downloader only while deadlines are pending: it ends when none are left.
        state.watchdog.task = Task.detached(priority: .utility) { await self.watch(generation: generation) }
    }

    private func watch(generation: UInt64) async {
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let next: ContinuousClock.Instant? = state.withLock { state in
                guard state.watchdog.generation == generation else { return nil }
                var next: ContinuousClock.Instant?
                for (id, deadline) in state.deadlines where !deadline.timedOut {
                    if deadline.at <= now {
                        state.deadlines[id]?.timedOut = true
                        if let task = state.tasks[deadline.request], task.id == id, let worker = task.worker { stopWorker(worker, &state) }
                    } else if next.map({ deadline.at < $0 }) ?? true {
                        next = deadline.at
                    }
                }
                state.watchdog.wake = next
                if next == nil { state.watchdog.task = nil }
                return next
            }
            guard let next else { return }
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }
}
