/// Something that shows an image: a GUI widget, a model object, a cell (the `UIImageView` of
/// `kf.setImage`). Adopt it and call `target.osprey.setImage(with:…)`.
///
/// Targets are classes and `Sendable`: Osprey sets ``image`` from the request's callback queue
/// (``OspreyOptions/callbackQueue``, default Osprey's shared serial queue; pass `.dispatch(.main)`
/// for a GUI on the main queue), so a target must make the setter safe to call from there. The setter runs
/// while Osprey holds its target lock (that is what keeps a stale result from overwriting a newer
/// one), so it must not call back into Osprey's target APIs.
public protocol ImageTarget: AnyObject, Sendable {
    /// The image shown; Osprey sets placeholders, results and failure images here.
    var image: Image? { get set }
}

/// The `osprey` namespace on a target, keeping Osprey's API off the target type itself
/// (Kingfisher's `kf` wrapper).
public struct OspreyWrapper<Base: ImageTarget>: Sendable {
    /// The wrapped target.
    public let base: Base

    /// Wraps `base`.
    public init(_ base: Base) {
        self.base = base
    }
}

extension ImageTarget {
    /// Osprey's target API: `target.osprey.setImage(with: url)`.
    public var osprey: OspreyWrapper<Self> { OspreyWrapper(self) }
}

/// A loading indicator a target shows while a request runs (Kingfisher's `Indicator`).
/// Calls come from the thread that called `setImage` (start) and the callback queue (stop).
public protocol ImageIndicator: Sendable {
    /// The request started.
    func startAnimating()
    /// The request finished, failed or was replaced.
    func stopAnimating()
}

/// How a loaded image replaces the current one, called instead of a plain set when the image did
/// not come from the memory cache (or always with ``forced``), e.g. to fade it in.
public struct ImageTransition: Sendable {
    /// Shows `image` on the target. Called on the callback queue, under the target lock.
    public let apply: @Sendable (any ImageTarget, Image) -> Void
    /// Run the transition for memory-cache hits too (Kingfisher's `forceTransition`). Default `false`.
    public let forced: Bool

    /// A transition running `apply`; `forced` defaults to `false`.
    public init(forced: Bool = false, apply: @escaping @Sendable (any ImageTarget, Image) -> Void) {
        self.apply = apply
        self.forced = forced
    }
}
