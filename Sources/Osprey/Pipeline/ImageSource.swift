import Foundation

/// A network image: its URL and the key it is cached under.
public struct ImageResource: Sendable, Hashable, CustomStringConvertible {
    /// Where the image is downloaded from (`http`, `https`, `file` or `data` URLs).
    public var url: URL
    /// The cache key. Default: the URL's absolute string. Override it for signed or expiring URLs
    /// whose query changes while the image does not (or set ``ImagePipeline/Configuration/cacheKeyFilter``).
    public var cacheKey: String

    /// A resource for `url`, cached under `cacheKey` (default `url.absoluteString`).
    public init(url: URL, cacheKey: String? = nil) {
        self.url = url
        self.cacheKey = cacheKey ?? url.absoluteString
    }

    public var description: String { url.absoluteString }
}

/// Where an image comes from: the network (Kingfisher's `Source.network`) or a data provider.
public enum ImageSource: Sendable, CustomStringConvertible {
    /// Downloaded by an ``ImageDownloader``.
    case network(ImageResource)
    /// Produced by an ``ImageDataProvider`` (key plus async data).
    case provider(any ImageDataProvider)

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
