import Foundation

/// A network image: its URL and the key it is cached under.
public struct ImageResource: Sendable, Hashable, CustomStringConvertible {
    /// Both values in one immutable object, so that copying a resource (or an ``ImageSource``, or
    /// an ``ImageResult``) retains one reference, not two.
    private final class Box: Sendable {
        let url: URL
        let cacheKey: String
        init(url: URL, cacheKey: String) {
            self.url = url
            self.cacheKey = cacheKey
        }
    }

    private var box: Box

    /// Where the image is downloaded from (`http`, `https`, `file` or `data` URLs).
    public var url: URL {
        get { box.url }
        set { box = Box(url: newValue, cacheKey: box.cacheKey) }
    }
    /// The cache key. Default: the URL's absolute string. Override it for signed or expiring URLs
    /// whose query changes while the image does not (or set ``ImagePipeline/Configuration/cacheKeyFilter``).
    public var cacheKey: String {
        get { box.cacheKey }
        set { box = Box(url: box.url, cacheKey: newValue) }
    }

    /// A resource for `url`, cached under `cacheKey` (default `url.absoluteString`).
    public init(url: URL, cacheKey: String? = nil) {
        box = Box(url: url, cacheKey: cacheKey ?? url.absoluteString)
    }

    public var description: String { url.absoluteString }

    /// Resources are equal when their URLs and cache keys are.
    public static func == (lhs: ImageResource, rhs: ImageResource) -> Bool {
        lhs.box === rhs.box || (lhs.url == rhs.url && lhs.cacheKey == rhs.cacheKey)
    }

    /// Hashes the URL and the cache key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(cacheKey)
    }
}

/// Where an image comes from: the network (Kingfisher's `Source.network`) or a data provider.
public enum ImageSource: Sendable, CustomStringConvertible {
    /// Downloaded by an ``ImageDownloader``.
    case network(ImageResource)
    /// Produced by an ``ImageDataProvider`` (key plus async data).
    ///
    /// (Boxed, so that a source is one reference either way: copying one, as every result does,
    /// is a single retain instead of an existential copy.)
    indirect case provider(any ImageDataProvider)

    /// A network source for `url`, cached under `url.absoluteString`.
    public static func url(_ url: URL) -> ImageSource { .network(ImageResource(url: url)) }

    /// The key the source's images are cached under.
    public var cacheKey: String {
        switch self {
        case .network(let resource): resource.cacheKey
        case .provider(let provider): provider.cacheKey
        }
    }

    /// The URL, for a network source.
    public var url: URL? {
        if case .network(let resource) = self { return resource.url }
        return nil
    }

    public var description: String {
        switch self {
        case .network(let resource): resource.description
        case .provider(let provider): "provider:\(provider.cacheKey)"
        }
    }
}
