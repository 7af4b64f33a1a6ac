/// Where a request's image is looked for. ``ResolvedRequest/step(after:)`` is the one place that
/// orders them; each step either answers the request or misses and asks it for the next.
///
/// `memory` and `disk` run for each request (``PipelineRequest``); from `share` on, the work is
/// shared by every request for the same processed image (the deliver and fetch jobs of
/// `ImagePipeline+Stages.swift`), and what is fetched is then decoded, processed and stored once.
enum RetrieveStep: Sendable, Hashable {
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
    /// Downloads the source or reads its provider (``ImagePipeline/load(_:options:progress:completion:)``).
    case load
    /// Nothing is left to try (``CachePolicy/cacheOnly``): the request fails with
    /// ``OspreyError/PipelineReason/imageNotExisting(key:)``.
    case fail
}

extension ResolvedRequest {
    /// The lookup order of a request, by its cache policy (`nil`: where it starts):
    /// memory → disk (processed) → share → original (memory, disk) → load.
    ///
    /// - ``CachePolicy/useCached``, ``CachePolicy/revalidate``: every step.
    /// - ``CachePolicy/memoryOrLoad``: no disk step.
    /// - ``CachePolicy/reload``: share, then load.
    /// - ``CachePolicy/cacheOnly``: every cache, then fail instead of load.
    func step(after step: RetrieveStep?) -> RetrieveStep {
        let policy = options.cachePolicy
        switch step {
        case nil:
            return policy.readsCache ? .memory : .share
        case .memory?:
            // An animation decoded frame by frame needs the original's bytes, which the fetch reads.
            return policy.readsDisk && !readsBytesForFrames ? .disk : .share
        case .disk?:
            return .share
        case .share?:
            guard policy.readsCache else { return .load }
            // Unprocessed and in the same cache, the original's memory entry is the one `share` looked up.
            return processorIdentifier.isEmpty && originalCache === cache ? self.step(after: .originalMemory) : .originalMemory
        case .originalMemory?:
            return policy.readsDisk ? .originalDisk : self.step(after: .originalDisk)
        case .originalDisk?, .load?, .fail?:
            return policy == .cacheOnly ? .fail : .load
        }
    }

    /// Whether the target disk entry is the original's and the request decodes an animation's
    /// frames on demand: then the processed disk lookup is skipped, and the fetch reads the
    /// entry's bytes instead of that lookup decoding every frame.
    private var readsBytesForFrames: Bool {
        processorIdentifier.isEmpty && originalCache === cache && options.cachePolicy != .revalidate
            && ImagePipeline.decodesFramesOnDemand(options)
    }
}
