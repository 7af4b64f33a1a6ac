import Foundation

// Debug builds are testable: S3Location and the S3 client's addressing are internal.
@testable import OspreyServer

/// Addressing built once: path-style and virtual-host, to turn a source into the URL the store
/// would be sent. (The client's HTTP client is never used here, and shut down never: the process
/// ends with the fuzzer.)
private let clients: [S3Client] = [true, false].map { pathStyle in
    var configuration = S3Configuration()
    configuration.endpoint = URL(string: "http://store.example:9000/base")!
    configuration.pathStyle = pathStyle
    return S3Client(configuration: configuration)
}

/// Checks an `s3://` source (an internal URL, ``S3Location``): it must name a valid location that
/// round-trips, with no `.`/`..` key segment, in `bucket` when one is given (thumbor's S3 loader,
/// uploads in a bucket); the URL the store would be sent must stay under that bucket (path-style:
/// `/base/BUCKET/`, virtual-host: host `BUCKET.store.example`) with no dot segment after it, even
/// once percent-decoded. Anything else is a finding, made a crash here. Other sources are not checked.
public func checkObject(_ url: URL, bucket: String? = nil) {
    guard S3Location.isInternal(url) else { return }
    guard let location = S3Location(internal: url) else { fatalError("s3 source \(url) does not name a location") }
    if let bucket, location.bucket != bucket { fatalError("s3 source \(url) left bucket \(bucket) for \(location.bucket)") }
    guard location.url == url || S3Location(internal: location.url) == location else { fatalError("s3 source \(url) does not round-trip") }
    for segment in location.key.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
        fatalError("s3 source \(url) has a dot segment in its key")
    }
    for client in clients {
        let sent = client.url(for: location)
        let path = sent.path  // decoded
        let expected = client.configuration.pathStyle ? "/base/\(location.bucket)/" : "/base/"
        guard path.hasPrefix(expected) else { fatalError("s3 source \(url) is sent to \(sent), outside \(expected)") }
        if !client.configuration.pathStyle, sent.host != "\(location.bucket).store.example" {
            fatalError("s3 source \(url) is sent to host \(sent.host ?? "none")")
        }
        let rest = path.dropFirst(expected.count)
        for segment in rest.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
            fatalError("s3 source \(url) is sent as \(sent), with a dot segment a server could resolve")
        }
    }
}
