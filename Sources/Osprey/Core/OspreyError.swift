import Foundation

/// The one error type Osprey throws.
///
/// Each case names the layer that failed and carries a reason saying what failed and with what
/// input, in the manner of Kingfisher's `KingfisherError`. `description` is a one-line,
/// human-readable sentence suitable for `error: <reason>` output.
public enum OspreyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes could not be turned into an ``Image``.
    case decoding(DecodingReason)
    /// An ``Image`` could not be turned into bytes.
    case encoding(EncodingReason)
    /// A processor or a processor spec failed.
    case processing(ProcessingReason)
    /// A memory or disk cache operation failed.
    case cache(CacheReason)
    /// Downloading image data (network, `file:`, `data:` or a custom provider) failed.
    case download(DownloadReason)
    /// A pipeline request (``ImagePipeline``, targets, prefetching) failed as a whole.
    case pipeline(PipelineReason)

    /// Why decoding failed.
    public enum DecodingReason: Sendable, Equatable {
        /// The input held no bytes.
        case emptyData
        /// The magic bytes match no supported format. `leadingBytes` is a hex dump of the first bytes.
        case unsupportedFormat(leadingBytes: String)
        /// The format was recognised but libvips has no loader for it in this build.
        case noDecoder(format: ImageFormat)
        /// The data is damaged. `message` is libvips' explanation.
        case corruptData(format: ImageFormat, message: String)
        /// The data ends before the image does. `message` is libvips' explanation.
        case truncatedData(format: ImageFormat, message: String)
        /// The header declares more pixels (summed over frames) than the decoding limit allows.
        case tooLarge(width: Int, height: Int, frames: Int, limitPixels: Int)
        /// A file could not be read.
        case unreadableFile(path: String, message: String)
        /// A placeholder hash (`algorithm` is `"ThumbHash"` or `"BlurHash"`) could not be read:
        /// `hash` is the input (its first 100 characters), `message` says what is wrong with it.
        case invalidPlaceholderHash(algorithm: String, hash: String, message: String)
    }

    /// Why encoding failed.
    public enum EncodingReason: Sendable, Equatable {
        /// This libvips build has no encoder for the format.
        case unsupportedFormat(ImageFormat)
        /// The quality is outside 1...100.
        case invalidQuality(Int)
        /// libvips reported an error while encoding.
        case failed(format: ImageFormat, message: String)
    }

    /// Why processing failed.
    public enum ProcessingReason: Sendable, Equatable {
        /// A processor spec string could not be parsed. `reason` says which step and why.
        case invalidSpec(spec: String, reason: String)
        /// A processor was given an argument it cannot use.
        case invalidArgument(processor: String, message: String)
        /// libvips reported an error while running the processor.
        case failed(processor: String, message: String)
    }

    /// Why a cache operation failed.
    public enum CacheReason: Sendable, Equatable {
        /// The entry costs more than the memory storage accepts for one entry.
        case entryTooLarge(key: String, cost: Int, limit: Int)
        /// The cache directory (or one of its parents) could not be created.
        case cannotCreateDirectory(path: String, message: String)
        /// An entry's file could not be written (read-only or full disk, missing directory...).
        case cannotWriteFile(key: String, path: String, message: String)
        /// An entry's file could not be removed.
        case cannotRemoveFile(path: String, message: String)
        /// The cache directory could not be listed.
        case cannotListDirectory(path: String, message: String)
        /// The cache serializer could not turn the image stored under `key` into bytes.
        case serializationFailed(key: String, message: String)
    }

    /// Why a download failed. See ``ImageDownloader``.
    public enum DownloadReason: Sendable, Equatable {
        /// The URL has no supported scheme (`http`, `https`, `file`, `data`) or no host, or a `data:` URL is malformed.
        case invalidURL(String)
        /// A request modifier returned `nil`; nothing was sent.
        case emptyRequest(url: URL)
        /// The download of `url` was cancelled: its caller's ``ImageTask`` or Swift task was
        /// cancelled, or (for the shared network task) every caller was.
        case cancelled(url: URL)
        /// The status code is not acceptable (by default only `200..<300` is).
        case invalidStatusCode(Int, response: DownloadResponse)
        /// The `Content-Type` is not among the acceptable ones (`nil` when the response had none).
        case invalidContentType(String?, response: DownloadResponse)
        /// The body is not an image (e.g. an HTML page sent with `200`) or cannot be used.
        case invalidResponse(url: URL, reason: String)
        /// The body exceeded `limit` bytes; the transfer stopped once `received` bytes had arrived
        /// (or before the body, from `Content-Length`).
        case responseTooLarge(url: URL, limit: Int, received: Int)
        /// The whole download did not finish within `seconds`.
        case timeout(url: URL, seconds: Double)
        /// More redirects than `limit` were met.
        case tooManyRedirects(url: URL, limit: Int)
        /// The transport failed (connection refused or lost, unreadable file, provider error).
        /// `message` describes the underlying error.
        case transport(url: URL, message: String)
        /// A response data modifier returned `nil`.
        case dataModifyingFailed(url: URL)
        /// The URL failed permanently before and is on the downloader's failed-URL list.
        case previouslyFailed(url: URL)
        /// The network is unavailable (``ImagePipeline/handleNetworkChange(available:metered:)``):
        /// nothing was sent, and nothing for `url` was cached. Retried when the network comes back.
        case offline(url: URL)
    }

    /// Why a pipeline request failed.
    public enum PipelineReason: Sendable, Equatable {
        /// ``CachePolicy/cacheOnly`` was set and nothing is cached under `key` (the computed key).
        case imageNotExisting(key: String)
        /// The request was cancelled (its task, or a newer request on the same target).
        case cancelled(source: String)
        /// A target's result arrived after the target moved on to another source; it was not applied.
        case notCurrentSourceTask(source: String)
        /// A target was given no source; the placeholder was set.
        case emptySource
        /// The source and every alternative source failed; `errors` are in the order of `sources`.
        case allSourcesFailed(sources: [String], errors: [OspreyError])
        /// An error that is not an ``OspreyError`` came from user code (e.g. a data provider).
        case unexpected(message: String)
    }

    public var description: String {
        switch self {
        case .decoding(let reason):
            switch reason {
            case .emptyData:
                return "cannot decode image: the data is empty"
            case .unsupportedFormat(let bytes):
                return "cannot decode image: unsupported format (leading bytes \(bytes))"
            case .noDecoder(let format):
                return "cannot decode \(format) image: this libvips build has no \(format) loader"
            case .corruptData(let format, let message):
                return "cannot decode \(format) image: corrupt data (\(message))"
            case .truncatedData(let format, let message):
                return "cannot decode \(format) image: truncated data (\(message))"
            case .tooLarge(let width, let height, let frames, let limit):
                return "cannot decode image: \(width)x\(height) pixels x \(frames) frame(s) exceeds the limit of \(limit) pixels"
            case .unreadableFile(let path, let message):
                return "cannot read \(path): \(message)"
            case .invalidPlaceholderHash(let algorithm, let hash, let message):
                return "cannot decode \(algorithm) \"\(hash)\": \(message)"
            }
        case .encoding(let reason):
            switch reason {
            case .unsupportedFormat(let format):
                return "cannot encode image: this libvips build has no \(format) encoder"
            case .invalidQuality(let quality):
                return "cannot encode image: quality \(quality) is outside 1...100"
            case .failed(let format, let message):
                return "cannot encode image as \(format): \(message)"
            }
        case .processing(let reason):
            switch reason {
            case .invalidSpec(let spec, let why):
                return "invalid processor spec \"\(spec)\": \(why)"
            case .invalidArgument(let processor, let message):
                return "invalid argument to processor \(processor): \(message)"
            case .failed(let processor, let message):
                return "processor \(processor) failed: \(message)"
            }
        case .cache(let reason):
            switch reason {
            case .entryTooLarge(let key, let cost, let limit):
                return "cannot cache \"\(key)\" in memory: it costs \(cost) bytes, more than the per-entry limit of \(limit) bytes"
            case .cannotCreateDirectory(let path, let message):
                return "cannot create cache directory \(path): \(message)"
            case .cannotWriteFile(let key, let path, let message):
                return "cannot write cache entry \"\(key)\" to \(path): \(message)"
            case .cannotRemoveFile(let path, let message):
                return "cannot remove cache file \(path): \(message)"
            case .cannotListDirectory(let path, let message):
                return "cannot list cache directory \(path): \(message)"
            case .serializationFailed(let key, let message):
                return "cannot serialize image \"\(key)\" for the disk cache: \(message)"
            }
        case .download(let reason):
            switch reason {
            case .invalidURL(let url):
                return "cannot download \(url): invalid or unsupported URL"
            case .emptyRequest(let url):
                return "cannot download \(url): the request modifier returned no request"
            case .cancelled(let url):
                return "download of \(url.absoluteString) cancelled"
            case .invalidStatusCode(let code, let response):
                return "cannot download \(response.url.absoluteString): HTTP status \(code)"
            case .invalidContentType(let type, let response):
                return "cannot download \(response.url.absoluteString): unacceptable content type \(type ?? "(none)")"
            case .invalidResponse(let url, let why):
                return "cannot download \(url.absoluteString): invalid response (\(why))"
            case .responseTooLarge(let url, let limit, let received):
                return "cannot download \(url.absoluteString): response exceeds \(limit) bytes (\(received) received)"
            case .timeout(let url, let seconds):
                return "cannot download \(url.absoluteString): timed out after \(seconds) s"
            case .tooManyRedirects(let url, let limit):
                return "cannot download \(url.absoluteString): more than \(limit) redirects"
            case .transport(let url, let message):
                return "cannot download \(url.absoluteString): \(message)"
            case .dataModifyingFailed(let url):
                return "cannot download \(url.absoluteString): the response data modifier returned no data"
            case .previouslyFailed(let url):
                return "cannot download \(url.absoluteString): it failed before (failed-URL list); pass retryFailed to try again"
            case .offline(let url):
                return "cannot download \(url.absoluteString): the network is unavailable and it is not cached"
            }
        case .pipeline(let reason):
            switch reason {
            case .imageNotExisting(let key):
                return "no cached image for \(key) (only-from-cache was set)"
            case .cancelled(let source):
                return "request for \(source) cancelled"
            case .notCurrentSourceTask(let source):
                return "result for \(source) arrived after the target moved on; not applied"
            case .emptySource:
                return "no source given"
            case .allSourcesFailed(let sources, let errors):
                let parts = zip(sources, errors).map { "\($0): \($1.description)" }
                return "every source failed: " + parts.joined(separator: "; ")
            case .unexpected(let message):
                return "unexpected error: \(message)"
            }
        }
    }
}
