import Foundation
import Synchronization

/// Loads a list of sources into the caches ahead of use (Kingfisher's `ImagePrefetcher`,
/// SDWebImage's `SDWebImagePrefetcher`).
///
/// Sources already cached are skipped (unless ``CachePolicy/reload``); a disk hit can be
/// promoted into memory. At most ``maxConcurrentRequests`` run at once (default 5) at
/// ``DownloadPriority/low`` priority unless the options say otherwise. ``stop()`` cancels what is
/// running and skips the rest.
public final class ImagePrefetcher: Sendable {
    /// What happened to each source.
    public struct Report: Sendable {
        /// Sources loaded into the cache.
        public var completed: [ImageSource] = []
        /// Sources that were already cached (or not started because of ``ImagePrefetcher/stop()``).
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
        /// Already cached, or not started because of ``ImagePrefetcher/stop()``.
        case skipped
        /// Failed.
        case failed(OspreyError)
    }

    /// Called after each source with the report so far, the source that just finished, what
    /// happened to it, and the total count.
    public typealias ProgressHandler = @Sendable (_ report: Report, _ latest: ImageSource, _ outcome: Outcome, _ total: Int) -> Void

    /// The sources, in the order they start.
    public let sources: [ImageSource]
    /// Requests running at once. Default 5.
    public let maxConcurrentRequests: Int
    /// Whether a source found on disk is loaded into memory (counted as completed). Default `false`: skipped.
    public let promotesDiskHitsToMemory: Bool

    private let pipeline: ImagePipeline
    private let options: [OspreyOption]
    private let state = Locked<(task: Task<Report, Never>?, stopped: Bool)>((nil, false))

    /// A prefetcher for `sources` through `pipeline` (default ``ImagePipeline/shared``) with
    /// `options` (default none; `.downloadPriority(.low)` is added unless a priority is given),
    /// `maxConcurrentRequests` (default 5) and `promotesDiskHitsToMemory` (default `false`).
    public init(
        sources: [ImageSource], options: [OspreyOption] = [], pipeline: ImagePipeline = .shared,
        maxConcurrentRequests: Int = 5, promotesDiskHitsToMemory: Bool = false
    ) {
        self.sources = sources
        self.pipeline = pipeline
        let hasPriority = options.contains { if case .downloadPriority = $0 { return true } else { return false } }
        self.options = hasPriority ? options : [.downloadPriority(.low)] + options
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.promotesDiskHitsToMemory = promotesDiskHitsToMemory
    }

    /// Prefetches every source and returns the report; `progress` (default `nil`) is called after
    /// each one. Cancelling the calling task works like ``stop()``.
    public func run(progress: ProgressHandler? = nil) async -> Report {
        let task = state.withLock { state -> Task<Report, Never> in
            if let task = state.task { return task }
            let task = Task { await self.work(progress: progress) }
            state.task = task
            return task
        }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            self.stop()
        }
    }

    /// Starts prefetching in the background; `completion` (default `nil`) gets the final report.
    public func start(progress: ProgressHandler? = nil, completion: (@Sendable (Report) -> Void)? = nil) {
        Task {
            let report = await run(progress: progress)
            completion?(report)
        }
    }

    /// Cancels running requests; sources not started yet are reported as skipped.
    public func stop() {
        let task = state.withLock { state -> Task<Report, Never>? in
            state.stopped = true
            return state.task
        }
        task?.cancel()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func work(progress: ProgressHandler?) async -> Report {
        let resolved = pipeline.resolvedOptions(options)
        let report = Locked(Report())
        let total = sources.count
        await withTaskGroup(of: (ImageSource, Outcome).self) { group in
            var next = 0
            func startNext() {
                guard next < sources.count else { return }
                let source = sources[next]
                next += 1
                group.addTask { (source, await self.prefetch(source, resolved: resolved)) }
            }
            for _ in 0..<min(maxConcurrentRequests, sources.count) { startNext() }
            while let (source, outcome) = await group.next() {
                let snapshot = report.withLock { report -> Report in
                    switch outcome {
                    case .completed: report.completed.append(source)
                    case .skipped: report.skipped.append(source)
                    case .failed(let error): report.failed.append((source, error))
                    }
                    return report
                }
                progress?(snapshot, source, outcome, total)
                startNext()
            }
        }
        return report.withLock { $0 }
    }

    private func prefetch(_ source: ImageSource, resolved: OspreyOptions) async -> Outcome {
        if isStopped || Task.isCancelled { return .skipped }
        if resolved.cachePolicy.readsCache {
            switch pipeline.cachedType(for: source, options: options) {
            case .memory: return .skipped
            case .disk where !promotesDiskHitsToMemory: return .skipped
            default: break
            }
        }
        do {
            _ = try await pipeline.image(for: source, options: options)
            return .completed
        } catch {
            if error.isCancellation { return .skipped }
            return .failed(error)
        }
    }
}
