import Foundation

/// A bucket and a key: an `s3://bucket/key` source, the place of a result or an upload.
///
/// Inside the server an `s3://` source travels as an `https` URL under a reserved host
/// (``internalHost``, in `.invalid`, which never resolves), so that the pipeline's data stage
/// caches and revalidates it like any remote source, under a cache key no `http(s)` source can
/// take: ``SourceURL`` refuses that host in sources. ``S3SourceLoader`` turns it back into a
/// signed request to the endpoint.
struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The host of the internal URLs of `s3://` sources.
    static let internalHost = "s3.osprey.invalid"

    /// The bucket name.
    var bucket: String
    /// The object's key (not encoded).
    var key: String

    var description: String { "s3://\(bucket)/\(key)" }

    /// `bucket` and `key` after the checks of ``validate(bucket:)`` and ``validate(key:)``.
    init(bucket: String, key: String) throws(ServerError) {
        try Self.validate(bucket: bucket)
        try Self.validate(key: key)
        self.bucket = bucket
        self.key = key
    }

    /// `s3://bucket/key` (scheme case-insensitive); the key percent-decoded once. 400 for another
    /// scheme, a bad bucket name, or a key that is empty, holds a NUL or a `.`/`..` segment.
    static func parse(_ text: String) throws(ServerError) -> S3Location {
        guard text.prefix(5).lowercased() == "s3://" else { throw .badRequest("source \"\(text)\" is not an s3:// URL") }
        let rest = text.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { throw .badRequest("source \"\(text)\" names a bucket but no key") }
        let encodedKey = String(rest[rest.index(after: slash)...])
        guard let key = encodedKey.removingPercentEncoding else { throw .badRequest("source \"\(text)\" has a badly percent-encoded key") }
        return try S3Location(bucket: String(rest[..<slash]), key: key)
    }

    /// The location an internal URL (``url``) stands for; `nil` for any other URL.
    init?(internal url: URL) {
        guard url.host?.lowercased() == Self.internalHost, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return nil
        }
        let path = components.percentEncodedPath.dropFirst()
        guard let slash = path.firstIndex(of: "/"), let key = path[path.index(after: slash)...].removingPercentEncoding,
            (try? S3Location(bucket: String(path[..<slash]), key: key)) != nil
        else { return nil }
        bucket = String(path[..<slash])
        self.key = key
    }

    /// Whether `url` is an internal URL of an `s3://` source.
    static func isInternal(_ url: URL) -> Bool { url.host?.lowercased() == internalHost }

    /// The internal URL of this source: `https://s3.osprey.invalid/<bucket>/<encoded key>`.
    var url: URL {
        URL(string: "https://\(Self.internalHost)/\(bucket)/\(SigV4Signer.uriEncode(key, encodingSlash: false))")!
    }

    /// Bucket names as S3 and its compatibles take them: 1 to 255 of `a-z A-Z 0-9 . _ -`, dots only
    /// between non-empty labels (AWS's own rules, 3 to 63 lower-case, are checked by AWS).
    static func validate(bucket: String) throws(ServerError) {
        let allowed = bucket.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default: return false
            }
        }
        // Dots only between labels: the name is a host label sequence in virtual-host addressing.
        guard allowed, (1...255).contains(bucket.utf8.count), !bucket.hasPrefix("."), !bucket.hasSuffix("."), !bucket.contains("..") else {
            throw .badRequest("\"\(bucket.prefix(64))\" is not a bucket name")
        }
    }

    /// Keys the server reads and writes: 1 to 1024 bytes, no NUL, no `.` or `..` segment (which
    /// some S3-compatible servers would resolve, so that `s3://a/../b/x` reached bucket `b`).
    static func validate(key: String) throws(ServerError) {
        guard (1...1024).contains(key.utf8.count) else { throw .badRequest("the key of an s3:// source must be 1 to 1024 bytes") }
        guard !key.utf8.contains(0) else { throw .badRequest("the key \"\(key.prefix(64))\" holds a NUL byte") }
        for segment in key.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
            throw .badRequest("the key \"\(key.prefix(64))\" has a \"\(segment)\" segment: keys never leave their bucket")
        }
    }
}
