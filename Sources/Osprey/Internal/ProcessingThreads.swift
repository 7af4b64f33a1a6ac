import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Threads a pipeline starts for its own decoding and processing, each lowered once, when it
/// starts, to a nice value above the process's (``ImagePipeline/Configuration/processingThreadNice``),
/// so that on a busy machine the threads that draw (a GTK app's main thread) get the cores first.
///
/// Why threads of its own: libdispatch's quality-of-service classes do not change a thread's
/// scheduling priority on Linux, and its worker threads are shared by every queue of the process,
/// so lowering one would lower unrelated work; a nice value, once raised, cannot be lowered again
/// without privileges. Threads libvips starts from these threads (its thread pool) inherit
/// their nice value, as Linux threads do.
/// Without it, a scrolling grid's main thread waits for a core behind decodes at its own priority.
final class ProcessingThreads: Sendable {
    /// The jobs waiting and the wake-ups, shared with the threads (which outlive no one: they end
    /// when the pool is released and its queue drained).
    private final class Queue: Sendable {
        let jobs = Locked<[@Sendable () -> Void]>([])
        let wakeUps = DispatchSemaphore(value: 0)

        /// The next job, waiting for one; `nil` once stopped and drained.
        func next() -> (@Sendable () -> Void)? {
            wakeUps.wait()
            return jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        }
    }

    private let queue = Queue()
    /// The number of threads.
    let count: Int

    /// Starts `count` threads (at least 1) named `name`, each at nice value `nice` (clamped to
    /// the process's own and 19: a thread is never raised above the process).
    init(count: Int, nice: Int32, name: String) {
        self.count = max(1, count)
        let queue = self.queue
        for _ in 0..<self.count {
            let thread = Thread {
                Self.lowerPriority(to: nice)
                while let job = queue.next() { job() }
            }
            thread.name = name
            thread.start()
        }
    }

    deinit {
        // Each thread finishes the jobs queued before, then takes one wake-up without a job and ends.
        for _ in 0..<count { queue.wakeUps.signal() }
    }

    /// Runs `work` on one of the threads, after the work queued before it has started.
    func async(_ work: @escaping @Sendable () -> Void) {
        queue.jobs.withLock { $0.append(work) }
        queue.wakeUps.signal()
    }

    /// Lowers the calling thread (on Linux the nice value is a thread's, and `who` 0 is the
    /// calling thread) to `nice`, or leaves it where it is when it is already lower.
    private static func lowerPriority(to nice: Int32) {
        #if os(Linux)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            errno = 0
            let current = getpriority(which, 0)
            guard errno == 0, nice > current else { return }
            _ = setpriority(which, 0, min(19, nice))
        #endif
    }
}
