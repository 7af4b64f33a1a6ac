import Foundation

/// The original bytes of a source as ``ImagePipeline/data(for:options:maxAge:honoringOriginMaxAge:)`` returns them:
/// exactly as the origin sent them, with what the original cache knows about them.
public struct ImageData: Sendable {
    /// Where the bytes came from in this call.
    public enum Provenance: Sendable, Equatable {
        /// The original cache's disk, used without asking the origin.
        case cache
        /// The origin (a download, or a `200` to a conditional request: the source changed).
        case origin
        /// The original cache's disk, after the origin answered `304 Not Modified` to a
        /// conditional request with the entry's validators: the bytes are fresh again.
        case revalidated
        /// The original cache's disk, after the origin failed to answer a revalidation
        /// (unreachable, an error status, bytes that are not an image): stale-if-error.
        case staleAfterError(OspreyError)
    }

    /// The bytes, exactly as the origin (or the provider) sent them.
    public var data: Data
    /// The response's `ETag` / `Last-Modified`, sent with the next revalidation; `nil` when the
    /// origin sent neither.
    package var validator: CacheValidator?
    /// The origin's `max-age` in seconds (`s-maxage` when given; `0` for `no-store` or
    /// `no-cache`); `nil` when the response had no `Cache-Control` freshness.
    public var originMaxAge: Int?
    /// How long ago the origin sent or last confirmed these bytes (zero for bytes just loaded).
    public var age: Duration
    /// Where the bytes came from in this call.
    public var provenance: Provenance

    /// Whether the origin sent these bytes in this call (``Provenance/origin``).
    public var isFromOrigin: Bool { provenance == .origin }

    /// Bytes with what is known about them; `originMaxAge` defaults to `nil`, `age` to zero.
    package init(
        data: Data, validator: CacheValidator?, originMaxAge: Int? = nil, age: Duration = .zero, provenance: Provenance
    ) {
        self.data = data
        self.validator = validator
        self.originMaxAge = originMaxAge
        self.age = age
        self.provenance = provenance
    }
}
