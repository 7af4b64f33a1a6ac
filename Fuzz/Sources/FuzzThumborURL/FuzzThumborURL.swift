import Foundation
import FuzzFileSources

// Debug builds are testable: the size estimate (and through it the resize math) is internal.
@testable import OspreyServer

/// Parsers built once: an unsigned one (every `unsafe/` URL reaches the grammar), a keyed one
/// (signature segments are verified first, then the grammar runs for `unsafe/` URLs), and one
/// taking bare paths as local files and ids as uploads (their sources get `checkContained`).
private let parsers = [
    ThumborURLParser(),
    ThumborURLParser(signer: ThumborSigner(key: "fuzz-key", sha256Length: 40), allowUnsafe: true),
    {
        // Bare image parts are files under a root, ids are uploads.
        var parser = ThumborURLParser()
        parser.localFiles = true
        parser.uploads = true
        return parser
    }(),
    {
        // Bare image parts are keys in a bucket (thumbor-aws's loader).
        var parser = ThumborURLParser()
        parser.s3Bucket = "fuzz-bucket"
        parser.uploads = true
        return parser
    }()
]

/// One input: a request path after the thumbor prefix, with an optional `?query`. Any thrown
/// ``ServerError`` is a correct answer (a 4xx); a crash or sanitizer report is the finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzThumborURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let path = String(parts[0])
    let query = parts.count > 1 ? String(parts[1]) : nil
    for parser in parsers {
        if let job = try? parser.parse(path: path, query: query) {
            // The cache key is derived from every part of the job: build it too.
            _ = job.processor.identifier
            _ = job.source.absoluteString
            checkContained(job.source)
            // A bare part is a key in the loader's bucket; an explicit s3:// part may name another.
            let decoded = [path, path.removingPercentEncoding ?? path].joined(separator: " ").lowercased()
            checkObject(job.source, bucket: decoded.contains("s3:") || decoded.contains("s3%3a") ? nil : parser.s3Bucket)
            // The size-dependent resize math, for a few source shapes.
            for (width, height) in [(1, 1), (400, 300), (16384, 1), (7, 50_000)] {
                _ = ResultSize.largest(job.processors, width: width, height: height)
            }
        }
    }
    return 0
}
