import Foundation

/// A custom source of image data (Kingfisher's `ImageDataProvider`): a key naming the image and an
/// async function producing its bytes. Load one with ``ImageSource/provider(_:)``.
public protocol ImageDataProvider: Sendable {
    /// A key identifying the image, e.g. for caching. Two providers with the same key must produce
    /// the same data.
    var cacheKey: String { get }
    /// Produces the image data. Errors are reported as ``OspreyError/DownloadReason/transport(url:message:)``
    /// (an ``OspreyError`` thrown here is passed through unchanged).
    func data() async throws -> Data
}

/// Provides the data of a local file.
public struct LocalFileImageDataProvider: ImageDataProvider {
    /// The file URL.
    public let fileURL: URL
    /// The key; defaults to the file URL's absolute string.
    public let cacheKey: String

    /// Creates a provider for `fileURL`, keyed by its absolute string unless `cacheKey` is given.
    public init(fileURL: URL, cacheKey: String? = nil) {
        self.fileURL = fileURL
        self.cacheKey = cacheKey ?? fileURL.absoluteString
    }

    /// Reads the file.
    public func data() async throws -> Data {
        try Data(contentsOf: fileURL)
    }
}

/// Provides data held in memory, or decoded from a base64 string.
public struct RawImageDataProvider: ImageDataProvider {
    /// The bytes.
    public let bytes: Data
    /// The key.
    public let cacheKey: String

    /// Creates a provider for `data` under `cacheKey`.
    public init(data: Data, cacheKey: String) {
        self.bytes = data
        self.cacheKey = cacheKey
    }

    /// Creates a provider for base64 text, or `nil` when it is not valid base64.
    public init?(base64: String, cacheKey: String) {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else { return nil }
        self.init(data: data, cacheKey: cacheKey)
    }

    /// Returns the bytes.
    public func data() async throws -> Data { bytes }
}
