import Foundation

/// What every stage of one piece of work needs, allocated once and shared by the stages'
/// closures (copying ``ResolvedOptions`` into each would retain each of its references again).
final class StageContext: Sendable {
    /// The request that started the work, as resolved (its options shared, not copied).
    let request: ResolvedRequest
    var source: ImageSource { request.source }
    /// The source's cache key.
    var key: String { request.key }
    var options: ResolvedOptions { _read { yield request.sharedOptions.value } }
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

    /// `fetchKey`: the request's key when the caller made it already (a key is made once per
    /// request: requests that cannot share work get a fresh one each time), else `nil`.
    init(_ request: ResolvedRequest, memoryMiss: MemoryMiss?, reportsProgress: Bool, fetchKey: HashedKey<FetchJobKey>? = nil) {
        self.request = request
        self.memoryMiss = memoryMiss
        self.fetchKey = fetchKey ?? HashedKey(FetchJobKey(request))
        self.reportsProgress = reportsProgress
        // Through a local reference to the box: no copy of the options (``SharedOptions``).
        let shared = request.sharedOptions
        framesOnDemand = ImagePipeline.decodesFramesOnDemand(shared.value)
    }
}
