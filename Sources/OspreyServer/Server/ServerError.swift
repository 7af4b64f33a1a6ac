import Foundation
import Osprey

/// A request the server answers with an error status and a one-line reason.
///
/// Every failure of a request becomes one of these in one place (``init(_:)`` maps
/// ``OspreyError``), so that bad input is always a 4xx with a reason and only the origin or the
/// server itself failing is a 5xx.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status code (400, 403, 404, 413, 422, 429, 500, 502, 503, 504).
    public var status: Int
    /// One line saying what failed and with what input.
    public var reason: String
    /// Seconds for a `Retry-After` header (429 and 503 only). Default `nil`.
    public var retryAfter: Int?

    /// An error answered with `status` and `reason`.
    public init(status: Int, reason: String, retryAfter: Int? = nil) {
        self.status = status
        self.reason = reason.replacingOccurrences(of: "\n", with: " ")
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status) \(reason)" }

    /// 400: the URL cannot be parsed.
    static func badRequest(_ reason: String) -> ServerError { .init(status: 400, reason: reason) }
    /// 403: signature missing or wrong, unsafe URL refused, source refused.
    static func forbidden(_ reason: String) -> ServerError { .init(status: 403, reason: reason) }
    /// 404: nothing here, or the origin answered 4xx.
    static func notFound(_ reason: String) -> ServerError { .init(status: 404, reason: reason) }
    /// 413: the source is over a size limit.
    static func tooLarge(_ reason: String) -> ServerError { .init(status: 413, reason: reason) }
    /// 422: the source is not a usable image, or an argument is out of range for it.
    static func unprocessable(_ reason: String) -> ServerError { .init(status: 422, reason: reason) }

    /// Maps a library error to its status: the one place where statuses are chosen for
    /// ``OspreyError``.
    public init(_ error: OspreyError) {
        let reason = error.description
        switch error {
        case .decoding(let why):
            switch why {
            case .tooLarge: self.init(status: 422, reason: reason)
            case .unreadableFile: self.init(status: 404, reason: reason)
            default: self.init(status: 422, reason: reason)
            }
        case .encoding(let why):
            switch why {
            case .invalidQuality: self.init(status: 400, reason: reason)
            case .unsupportedFormat: self.init(status: 422, reason: reason)
            case .failed: self.init(status: 500, reason: reason)
            }
        case .processing(let why):
            switch why {
            case .invalidSpec: self.init(status: 400, reason: reason)
            case .invalidArgument, .failed: self.init(status: 422, reason: reason)
            }
        case .cache: self.init(status: 500, reason: reason)
        case .download(let why):
            switch why {
            case .invalidURL: self.init(status: 400, reason: reason)
            case .invalidStatusCode(let code, _):
                self.init(status: (400..<500).contains(code) ? 404 : 502, reason: reason)
            case .invalidContentType, .invalidResponse, .dataModifyingFailed: self.init(status: 422, reason: reason)
            case .responseTooLarge: self.init(status: 413, reason: reason)
            case .timeout: self.init(status: 504, reason: reason)
            case .tooManyRedirects: self.init(status: 502, reason: reason)
            case .transport(_, let message):
                // The source guard refuses an address inside the loader (redirect hops); its
                // message carries this marker.
                self.init(status: message.contains(SourceGuard.refusalMarker) ? 403 : 502, reason: reason)
            case .cancelled, .offline: self.init(status: 503, reason: reason)
            case .previouslyFailed: self.init(status: 404, reason: reason)
            case .emptyRequest: self.init(status: 500, reason: reason)
            }
        case .pipeline(let why):
            switch why {
            case .allSourcesFailed(_, let errors) where !errors.isEmpty: self.init(errors[0])
            case .imageNotExisting: self.init(status: 404, reason: reason)
            case .cancelled: self.init(status: 503, reason: reason)
            default: self.init(status: 500, reason: reason)
            }
        }
    }
}
