import Foundation

/// Loads sources into the caches ahead of use (Nuke's `ImagePrefetcher`, Kingfisher's and
/// SDWebImage's prefetchers): ``startPrefetching(with:)-([ImageSource])`` queues them,
/// ``stopPrefetching(with:)-([ImageSource])`` takes them back, as a list or a grid scrolls.
///
/// Sources already cached are skipped (unless ``CachePolicy/reload``); a disk hit can be
/// promoted into memory. At most `maxConcurrentRequests` run at once (default 5), in the order
/// they were queued, at ``DownloadPriority/low`` priority unless the options say otherwise. A
/// source queued twice is prefetched once. Stopping a running prefetch cancels only its own
/// request: work another request shares (a widget showing the same image) goes on for it.
public final class ImagePrefetcher: Sendable {
    /// What happened to each source of ``prefetch(_:progress:)``.
    public struct Report: Sendable {
        /// Sources loaded into the cache.
        public var completed: [ImageSource] = []
        /// Sources that were already cached, or stopped before they were loaded.
        public var skipped: [ImageSource] = []
        /// Sources that failed, with why.
        public var failed: [(source: ImageSource, error: OspreyError)] = []

        /// How many sources have been handled.
        public var finishedCount: Int { completed.count + skipped.count + failed.count }
    }

    /// What happened to one source.
    public enum Outcome: Sendable {
        /// Loaded into the cache.
        case completed
        /// Already cached, or stopped before it was loaded.
        case skipped
        /// Failed.
        case failed(OspreyError)
    }

    /// Requests running at once. Default 5.
    package let maxConcurrentRequests: Int
    /// Whether a source found on disk is loaded into memory (counted as completed). Default `false`: skipped.
    package let promotesDiskHitsToMemory: Bool

    private let pipeline: ImagePipeline
    private let options: [RequestOption]
    /// Whether the options' cache policy reads the caches (then cached sources are skipped).
    private let readsCache: Bool
    private let queue: Locked<PrefetchQueue>

    /// A prefetcher through `pipeline` (default ``ImagePipeline/shared``) with `options` (default
    /// none; `.downloadPriority(.low)` is added unless a priority is given), `maxConcurrentRequests`
    /// (default 5) and `promotesDiskHitsToMemory` (default `false`).
    public init(
        options: [RequestOption] = [], pipeline: ImagePipeline = .shared, maxConcurrentRequests: Int = 5,
        promotesDiskHitsToMemory: Bool = false
    ) {
        self.pipeline = pipeline
        let hasPriority = options.contains { if case .downloadPriority = $0 { return true } else { return false } }
        // The completion only records the outcome: no hop to a queue for it.
        self.options = (hasPriority ? options : [.downloadPriority(.low)] + options) + [.callbackQueue(.immediate)]
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.promotesDiskHitsToMemory = promotesDiskHitsToMemory
        readsCache = pipeline.resolvedOptions(self.options).cachePolicy.readsCache
        queue = Locked(PrefetchQueue(limit: max(1, maxConcurrentRequests)))
        pipeline.memoryPressureState.register(self)
    }

    /// Whether the pipeline's memory pressure holds new starts back (``ImagePipeline/handleMemoryPressure(_:)``).
    private var isPaused: Bool { pipeline.pausesPrefetching }

    /// Starts what the queue holds, after the pipeline's memory pressure fell back to normal (or
    /// the network came back, unmetered: ``ImagePipeline/handleNetworkChange(available:metered:)``).
    func resumeAfterMemoryPressure() {
        guard !isPaused else { return }
        queue.withLock { $0.startable() }.forEach(launch)
    }

    /// Queues `sources` for prefetching, after those already queued; sources queued or running
    /// already are left where they are. While the pipeline is under memory pressure
    /// (``ImagePipeline/handleMemoryPressure(_:)``) nothing new starts: the queue waits for
    /// ``MemoryPressureLevel/normal``.
    public func startPrefetching(with sources: [ImageSource]) {
        let starts = queue.withLock { queue in
            for source in sources { queue.enqueue(source, key: pipeline.cacheKey(for: source)) }
            return isPaused ? [] : queue.startable()
        }
        starts.forEach(launch)
    }

    /// ``startPrefetching(with:)-([ImageSource])`` of URLs.
    public func startPrefetching(with urls: [URL]) {
        startPrefetching(with: urls.map(ImageSource.url))
    }

    /// Takes `sources` back: queued ones are dropped, running ones cancelled (their requests
    /// leave the shared work, which goes on for any other request that wants it).
    public func stopPrefetching(with sources: [ImageSource]) {
        let (tasks, dropped) = queue.withLock { queue in queue.stop(keys: sources.map(pipeline.cacheKey(for:))) }
        tasks.forEach { $0.cancel() }
        for (source, listeners) in dropped { listeners.forEach { $0(source, .skipped) } }
    }

    /// ``stopPrefetching(with:)-([ImageSource])`` of URLs.
    public func stopPrefetching(with urls: [URL]) {
        stopPrefetching(with: urls.map(ImageSource.url))
    }

    /// Whether a source is queued or running (for OspreyGTK's grid).
    package var isPrefetching: Bool { queue.withLock { !$0.isEmpty } }

    /// Takes back everything queued or running.
    public func stopPrefetching() {
        let (tasks, dropped) = queue.withLock { queue in queue.stop(keys: nil) }
        tasks.forEach { $0.cancel() }
        for (source, listeners) in dropped { listeners.forEach { $0(source, .skipped) } }
    }

    /// Prefetches `sources` and returns what happened to each; `progress` (default `nil`) is
    /// called after each one with the report so far, the source that just finished, what happened
    /// to it, and the total count. Cancelling the calling task stops them (they count as skipped).
    public func prefetch(
        _ sources: [ImageSource],
        progress: (@Sendable (_ report: Report, _ latest: ImageSource, _ outcome: Outcome, _ total: Int) -> Void)? = nil
    ) async -> Report {
        let unique = Dictionary(sources.map { (pipeline.cacheKey(for: $0), $0) }, uniquingKeysWith: { first, _ in first })
        guard !unique.isEmpty else { return Report() }
        let report = Locked(Report())
        let total = unique.count
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Report, Never>) in
                let listener: PrefetchQueue.Listener = { source, outcome in
                    let (snapshot, done) = report.withLock { report -> (Report, Bool) in
                        switch outcome {
                        case .completed: report.completed.append(source)
                        case .skipped: report.skipped.append(source)
                        case .failed(let error): report.failed.append((source, error))
                        }
                        return (report, report.finishedCount == total)
                    }
                    progress?(snapshot, source, outcome, total)
                    if done { continuation.resume(returning: snapshot) }
                }
                let ordered = sources.filter { unique[pipeline.cacheKey(for: $0)] != nil }
                queue.withLock { queue in
                    for key in unique.keys { queue.listen(key: key, listener) }
                }
                startPrefetching(with: ordered)
            }
        } onCancel: {
            stopPrefetching(with: Array(unique.values))
        }
    }

    /// Starts the request for a source taken off the queue.
    private func launch(_ start: PrefetchQueue.Start) {
        if readsCache {
            switch pipeline.cachedType(for: start.source, options: options) {
            case .memory: return finish(start, .skipped)
            case .disk where !promotesDiskHitsToMemory: return finish(start, .skipped)
            default: break
            }
        }
        let task = pipeline.loadImage(with: start.source, options: options) { [self] result in
            switch result {
            case .success: finish(start, .completed)
            case .failure(let error): finish(start, error.isCancellation ? .skipped : .failed(error))
            }
        }
        // Stopped while it started: cancelled now that there is a task to cancel.
        if queue.withLock({ $0.started(start, task: task) }) { task.cancel() }
    }

    private func finish(_ start: PrefetchQueue.Start, _ outcome: Outcome) {
        let paused = isPaused
        let (listeners, starts) = queue.withLock { queue in (queue.finish(start), paused ? [] : queue.startable()) }
        listeners.forEach { $0(start.source, outcome) }
        starts.forEach(launch)
    }
}
