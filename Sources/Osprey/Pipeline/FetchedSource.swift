import Foundation

/// The source of a miss as the fetch stage found it: the original image in the original cache's
/// memory, or the original bytes (from its disk, or loaded).
struct FetchedSource: Sendable {
    /// The decoded original, when it came from the memory cache.
    var image: Image?
    /// The original bytes, when they were read or downloaded.
    var data: Data?
    /// Where it came from: ``CacheType/none`` when loaded, else the original cache's level.
    var cacheType: CacheType
    /// The validators of the response, for ``CachePolicy/revalidate``.
    var validator: CacheValidator?
    /// The decodes of `data` by decode plan (`nil`: in full), shared by every request that
    /// fetched it, each kept once made; `nil` without bytes, and when one request fetched them
    /// (it decodes alone: no table, no job per decode). Set by ``sharedByRequests()``.
    private(set) var decodes: JobRegistry<DecodePlan?, ProcessedImage>?

    init(image: Image?, data: Data?, cacheType: CacheType, validator: CacheValidator?) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.validator = validator
    }

    /// This source as handed to more than one request: with a table of decodes they share when
    /// it has bytes to decode. (The fetch stage hands the bytes to its requests one by one, and
    /// a decode that finished before the last of them asked must not run again: the table keeps
    /// each decode, and lives as long as the bytes.)
    func sharedByRequests() -> FetchedSource {
        var shared = self
        if image == nil, data != nil { shared.decodes = JobRegistry(keepsFinished: true) }
        return shared
    }
}

extension SharedJob where Value == FetchedSource {
    /// Ends a fetch job: the bytes go to its requests with a decodes table when more than one
    /// asked for them (``FetchedSource/sharedByRequests()``).
    func finishFetch(_ outcome: Result<FetchedSource, OspreyError>) {
        finish(outcome, sharedAs: { $0.sharedByRequests() })
    }
}

/// An image after some of a request's processors, with how its bytes were decoded (`nil` when
/// nothing was decoded for it: the original came from the memory cache).
struct ProcessedImage: Sendable {
    var image: Image
    var decoded: DecodeInfo?
}

/// What the last stage hands to each request.
struct DeliveredImage: Sendable {
    var image: Image
    var data: Data?
    var cacheType: CacheType
    var decoded: DecodeInfo?
    /// The animation's decoder when `image` is its first frame alone (``RequestOption/animationFramesOnDemand(_:)``).
    var frames: AnimationFrameDecoder?
}
