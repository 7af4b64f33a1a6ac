/// Target-only settings of ``OspreyWrapper``'s `setImage(with:placeholder:options:settings:pipeline:progress:completion:)`.
public struct TargetSettings<Target: ImageTarget>: Sendable {
    /// Keep what the widget shows instead of the placeholder while loading
    /// (Kingfisher's `keepCurrentImageWhileLoading`). Default `false`.
    public var keepCurrentImageWhileLoading: Bool
    /// Shown when the request fails (not when it is cancelled). Default `nil`: leave the widget as it is.
    public var failureImage: Image?
    /// Made per request on the main actor and shown while it runs (not for memory hits).
    /// Default `nil`: no indicator.
    public var indicator: (@MainActor @Sendable (Target) -> (any ImageIndicator)?)?
    /// Used instead of a plain display for images not from the memory cache. Default `nil`.
    public var transition: ImageTransition<Target>?
    /// Decode at the widget's size (``ImageTarget/ospreyPixelSize``): a downsample to that
    /// box runs first in the processor chain, so decode planning shrinks on load and a 4000×3000
    /// photo in a 200×150 cell costs a 200×150 image; the original bytes are kept on the disk
    /// cache too (``RequestOption/originalStorage(_:)`` `.disk`, unless the options set it), so
    /// that a larger size later costs no download. Default `true`.
    public var sizedToTarget: Bool
    /// On cancel or rebind, let a download already running finish into the cache at low
    /// priority (its result is never shown), so that coming back to the image does not download it
    /// again. Default `true`.
    public var finishesDownloadOnCancel: Bool
    /// On a memory miss, show at once another decoded variant of the same source that is in the
    /// memory cache (the largest: a grid's thumbnail when a detail view opens), scaled to the
    /// widget, until the image asked for replaces it plainly (Coil's placeholder key, Glide's
    /// `thumbnail()`); it takes the placeholder's place. Default `true`.
    public var showsCachedVariantFirst: Bool
    /// The memory-cache key of the image to show that way instead of looking for a variant
    /// (``ImagePipeline/memoryCacheKey(for:options:)``); shown only when it is in memory. Default `nil`.
    public var placeholderMemoryKey: String?

    /// Settings; every argument has the default documented on its property.
    public init(
        keepCurrentImageWhileLoading: Bool = false, failureImage: Image? = nil,
        indicator: (@MainActor @Sendable (Target) -> (any ImageIndicator)?)? = nil,
        transition: ImageTransition<Target>? = nil, sizedToTarget: Bool = true, finishesDownloadOnCancel: Bool = true,
        showsCachedVariantFirst: Bool = true, placeholderMemoryKey: String? = nil
    ) {
        self.keepCurrentImageWhileLoading = keepCurrentImageWhileLoading
        self.failureImage = failureImage
        self.indicator = indicator
        self.transition = transition
        self.sizedToTarget = sizedToTarget
        self.finishesDownloadOnCancel = finishesDownloadOnCancel
        self.showsCachedVariantFirst = showsCachedVariantFirst
        self.placeholderMemoryKey = placeholderMemoryKey
    }
}
