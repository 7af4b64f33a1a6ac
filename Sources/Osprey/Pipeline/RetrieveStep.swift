/// Where a request's image is looked for, in the order they are tried. ``RetrievePlan/init(_:originalIsTarget:)``
/// is the one place that decides which a request takes; each step either answers the request or
/// misses and asks the plan for the next.
///
/// `memory` and `disk` run for each request (``PipelineRequest``); from `share` on, the work is
/// shared by every request for the same processed image (the deliver and fetch jobs of
/// `ImagePipeline+Stages.swift`), and what is fetched is then decoded, processed and stored once.
enum RetrieveStep: UInt8, Sendable, Hashable {
    /// The processed image in the target cache's memory.
    case memory
    /// The processed image in the target cache's disk.
    case disk
    /// Joins the work shared by every request for the same processed image (the deliver job):
    /// the steps below run once for all of them.
    case share
    /// The original image in the original cache's memory.
    case originalMemory
    /// The original bytes on the original cache's disk.
    case originalDisk
    /// Downloads the source or reads its provider (``ImagePipeline/load(_:downloader:options:progress:completion:)``).
    case load
    /// Nothing is left to try (``CachePolicy/cacheOnly``): the request fails with
    /// ``OspreyError/PipelineReason/imageNotExisting(key:)``.
    case fail
}

/// The steps one request takes, decided once when it is resolved.
struct RetrievePlan: Sendable, Hashable {
    private var steps: UInt8 = 0

    /// The lookup order of a request with `options`, by its cache policy: memory → disk
    /// (processed) → share → original (memory, disk) → load. `originalIsTarget`: unprocessed and in
    /// the same cache, so that the processed entry is the original's.
    ///
    /// - ``CachePolicy/useCached``, ``CachePolicy/revalidate``: every step.
    /// - ``CachePolicy/memoryOrLoad``: no disk step.
    /// - ``CachePolicy/reload``: share, then load.
    /// - ``CachePolicy/cacheOnly``: every cache, then fail instead of load.
    init(_ options: ResolvedOptions, originalIsTarget: Bool) {
        let policy = options.cachePolicy
        if policy.readsCache {
            insert(.memory)
            // An animation decoded frame by frame needs the original's bytes, which the fetch reads.
            let readsBytesForFrames =
                originalIsTarget && policy != .revalidate && ImagePipeline.decodesFramesOnDemand(options)
            if policy.readsDisk && !readsBytesForFrames { insert(.disk) }
        }
        insert(.share)
        if policy.readsCache {
            // The original's memory entry is the processed one, which `share` looked up.
            if !originalIsTarget { insert(.originalMemory) }
            if policy.readsDisk { insert(.originalDisk) }
        }
        insert(policy == .cacheOnly ? .fail : .load)
    }

    private mutating func insert(_ step: RetrieveStep) { steps |= 1 << step.rawValue }

    /// The step after `step` (`nil`: the first).
    func step(after step: RetrieveStep?) -> RetrieveStep {
        let rest = step.map { steps & ~((2 << $0.rawValue) - 1) } ?? steps
        // Every plan ends with load or fail, so a step after them is that one again.
        guard rest != 0 else { return steps & (1 << RetrieveStep.fail.rawValue) != 0 ? .fail : .load }
        return RetrieveStep(rawValue: UInt8(rest.trailingZeroBitCount)) ?? .load
    }
}

extension ResolvedRequest {
    /// The step of this request's lookup order after `step` (`nil`: the first): ``RetrievePlan``.
    func step(after step: RetrieveStep?) -> RetrieveStep { plan.step(after: step) }
}
