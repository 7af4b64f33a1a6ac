/// A widget that lives on the main actor and shows images: a GTK picture (OspreyGTK's
/// `OspreyPicture`), a cell, any `@MainActor` view. Adopt it and call
/// `widget.osprey.setImage(with:…)` from the main actor (Kingfisher 8's `@MainActor` `kf`
/// extensions and Nuke's `ImageViewExtensions` are the models).
///
/// Everything Osprey does to the widget (placeholder, result, failure image, indicator,
/// transition) runs on the main actor, and the check "is this still the widget's latest request?"
/// runs in the same main-actor turn as the set. A memory-cache hit is shown before `setImage`
/// returns, with no placeholder first. The per-widget state is the widget's own
/// ``ImageTargetController``: releasing the widget releases it, which cancels its load.
///
/// What the widget shows is its ``Content`` (a texture, a pixmap), made from an ``Image`` by
/// ``makeContent(_:)`` off the main actor for loaded images, so no pixel work lands on the main
/// thread; only memory hits and placeholders are converted on the main actor, so the conversion
/// must be cheap (wrap the pixels, do not copy them).
///
/// A non-UI object (a model, a server-side record) is no target: it awaits
/// ``ImagePipeline/image(for:options:)-(URL,_)`` and keeps the image itself.
@MainActor
public protocol ImageTarget: AnyObject, Sendable {
    /// What the widget shows, made from an image off the main actor.
    associatedtype Content: Sendable

    /// The widget's request state; keep one per widget, stored with it (`let` property).
    var ospreyController: ImageTargetController { get }

    /// The size, in device pixels, to decode images at when ``TargetSettings/sizedToTarget``
    /// is on (allocated size times scale factor); `nil` when unknown (no downsampling).
    var ospreyPixelSize: (width: Int, height: Int)? { get }

    /// Whether the widget shows something (used by ``TargetSettings/keepCurrentImageWhileLoading``).
    var ospreyHasContent: Bool { get }

    /// Makes what the widget shows from `image`. Called off the main actor for loaded images and
    /// on it for memory hits and placeholders; returns `nil` when the image cannot be shown.
    nonisolated static func makeContent(_ image: Image) -> Content?

    /// Makes what the widget shows from a loaded result, off the main actor. Default:
    /// ``makeContent(_:)`` of its image. A target that plays animations from their frame decoder
    /// (``ImageResult/frameDecoder``) uses it along with ``ospreyDecodesFramesOnDemand``.
    nonisolated static func makeContent(for result: ImageResult) -> Content?

    /// Whether `setImage` asks for animations as a first frame and a frame decoder
    /// (``RequestOption/animationFramesOnDemand(_:)``; a caller's
    /// ``RequestOption/animationFramesOnDemand(_:)`` overrides it): only for a target whose
    /// ``makeContent(for:)`` plays the decoder. Default `false`.
    nonisolated static var ospreyDecodesFramesOnDemand: Bool { get }

    /// Shows `content` (`nil` clears the widget).
    func display(_ content: Content?)
}

extension ImageTarget {
    /// ``makeContent(_:)`` of the result's image (the default).
    public nonisolated static func makeContent(for result: ImageResult) -> Content? {
        makeContent(result.image)
    }

    /// `false` (the default): animations come with every frame decoded.
    public nonisolated static var ospreyDecodesFramesOnDemand: Bool { false }
}

/// The `osprey` namespace on a main-actor target (``ImageTarget``).
@MainActor
public struct OspreyWrapper<Base: ImageTarget> {
    /// The wrapped widget.
    public let base: Base

    /// Wraps `base`.
    public init(_ base: Base) {
        self.base = base
    }
}

extension ImageTarget {
    /// Osprey's target API: `widget.osprey.setImage(with: url)`.
    public var osprey: OspreyWrapper<Self> { OspreyWrapper(self) }
}

/// A loading indicator shown on a main-actor target while its request runs (Kingfisher's
/// `Indicator`); both calls come on the main actor.
@MainActor
public protocol ImageIndicator: AnyObject {
    /// The request started (not called for memory hits).
    func startAnimating()
    /// The request finished, failed, was cancelled or replaced.
    func stopAnimating()
}

/// How a loaded image replaces what a main-actor target shows, e.g. a fade; called on the main
/// actor instead of ``ImageTarget/display(_:)`` for images not from the memory cache
/// (or for all with ``forced``).
public struct ImageTransition<Target: ImageTarget>: Sendable {
    /// Shows `content` on `target`, animated as the transition likes.
    public let apply: @MainActor @Sendable (Target, Target.Content) -> Void
    /// Run the transition for memory-cache hits too (Kingfisher's `forceTransition`). Default `false`.
    public let forced: Bool

    /// A transition running `apply`; `forced` defaults to `false`.
    public init(forced: Bool = false, apply: @escaping @MainActor @Sendable (Target, Target.Content) -> Void) {
        self.apply = apply
        self.forced = forced
    }
}
