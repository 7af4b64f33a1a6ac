import Foundation

// Debug builds are testable: the size estimate (and through it the resize math) is internal.
@testable import OspreyServer

/// Parsers built once: an unsigned one (every `unsafe/` URL reaches the grammar) and a keyed one
/// (signature segments are verified first, then the grammar runs for `unsafe/` URLs).
private let parsers = [
    ThumborURLParser(),
    ThumborURLParser(signer: ThumborSigner(key: "fuzz-key", sha256Length: 40), allowUnsafe: true),
    {
        // Bare image parts are files under a root, ids are uploads.
        var parser = ThumborURLParser()
        parser.localFiles = true
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
            // The size-dependent resize math, for a few source shapes.
            for (width, height) in [(1, 1), (400, 300), (16384, 1), (7, 50_000)] {
                _ = ResultSize.largest(job.processors, width: width, height: height)
            }
        }
    }
    return 0
}

/// A root holding one file, beside a file outside it: a file source that resolves at all must
/// resolve under its root (an escape is a finding, made a crash here).
private let files: (local: LocalSource, root: String, uploads: String) = {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-fuzz-\(getpid())")
    let root = base.appendingPathComponent("root"), uploads = base.appendingPathComponent("uploads")
    try? FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try? FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
    try? Data("in".utf8).write(to: root.appendingPathComponent("a.jpg"))
    try? Data("in".utf8).write(to: uploads.appendingPathComponent("0123456789abcdef0123456789abcdef"))
    try? Data("out".utf8).write(to: base.appendingPathComponent("secret.jpg"))
    try? FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link.jpg").path, withDestinationPath: "../secret.jpg")
    let local = LocalSource(root: root, uploads: uploads)
    return (local, local.root ?? "", local.uploads ?? "")
}()

private func checkContained(_ url: URL) {
    guard LocalSource.isFile(url), let file = try? files.local.file(for: url) else { return }
    let root = url.scheme == LocalSource.uploadScheme ? files.uploads : files.root
    if !file.path.hasPrefix(root + "/") { fatalError("file source escaped its root: \(url) -> \(file.path)") }
}
