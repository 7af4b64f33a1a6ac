import Foundation

/// A bucket and a key prefix, `s3://BUCKET[/PREFIX]`: where the result store (or uploads) keep
/// their objects.
public struct S3Path: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    public var bucket: String
    /// The key prefix, empty or ending with `/`.
    public var prefix: String

    /// `s3://BUCKET[/PREFIX]`; `nil` when `text` is not one (another scheme, a bad bucket name, a
    /// `.`/`..` segment in the prefix).
    public init?(_ text: String) {
        guard text.prefix(5).lowercased() == "s3://" else { return nil }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        var prefix = String(rest.dropFirst(bucket.count + 1))
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        guard (try? S3Location.validate(bucket: bucket)) != nil else { return nil }
        if !prefix.isEmpty, (try? S3Location.validate(key: prefix + "x")) == nil { return nil }
        self.bucket = bucket
        self.prefix = prefix
    }

    public var description: String { "s3://\(bucket)/\(prefix)" }

    /// The location of `name` under the prefix.
    func location(_ name: String) throws(ServerError) -> S3Location {
        try S3Location(bucket: bucket, key: prefix + name)
    }
}
