import Foundation

/// What every stage of one piece of work needs, allocated once and shared by the stages' closures.
final class StageContext: Sendable {
    /// The request that started the work, as resolved (its options shared, not copied).
    let request: ResolvedRequest
    var source: ImageSource { request.source }
    /// The source's cache key.
    var key: String { request.key }
    /// The request's options (a copy of its reference, read in place by every stage).
    let options: ResolvedOptions
    var cache: ImageCache { request.cache }
    var originalCache: ImageCache { request.originalCache }
    let fetchKey: HashedKey<FetchJobKey>
    /// The starting request's miss of the target memory cache (`nil`: the deliver stage looks again).
    let memoryMiss: MemoryMiss?
    /// Whether download progress is relayed: only when the request starting the work has a
    /// progress handler (reporting it costs the downloader a lock per chunk).
    let reportsProgress: Bool
    /// Whether the request takes an animation as its first frame and a frame decoder
    /// (``ImagePipeline/decodesFramesOnDemand(_:)``), worked out once for its stages.
    let framesOnDemand: Bool

    /// `fetchKey`: the request's key, made once per request (requests that cannot share work get
    /// a fresh one each time).
    init(_ request: ResolvedRequest, memoryMiss: MemoryMiss?, reportsProgress: Bool, fetchKey: HashedKey<FetchJobKey>) {
        self.request = request
        options = request.options
        self.memoryMiss = memoryMiss
        self.fetchKey = fetchKey
        self.reportsProgress = reportsProgress
        framesOnDemand = ImagePipeline.decodesFramesOnDemand(request.options)
    }
}
