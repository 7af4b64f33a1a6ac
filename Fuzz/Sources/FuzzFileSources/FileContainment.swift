import Foundation

// Debug builds are testable: LocalSource is internal to the server.
@testable import OspreyServer

/// The files a fuzzed file source may resolve to, built once per process in a temporary directory:
/// a root holding `a.jpg` (and an empty `sub/`), an upload directory holding one upload id, and,
/// beside them, `secret.jpg` with a symbolic link `root/link.jpg` to it. Only the two inner files
/// are reachable; `secret.jpg` is the canary.
private let files: (local: LocalSource, inside: Set<String>) = {
    let manager = FileManager.default
    let base = manager.temporaryDirectory.appendingPathComponent("osprey-fuzz-\(getpid())")
    let root = base.appendingPathComponent("root")
    let uploads = base.appendingPathComponent("uploads")
    try? manager.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try? manager.createDirectory(at: uploads, withIntermediateDirectories: true)
    try? Data("in".utf8).write(to: root.appendingPathComponent("a.jpg"))
    try? Data("in".utf8).write(to: uploads.appendingPathComponent("0123456789abcdef0123456789abcdef"))
    try? Data("out".utf8).write(to: base.appendingPathComponent("secret.jpg"))
    try? manager.createSymbolicLink(
        atPath: root.appendingPathComponent("link.jpg").path, withDestinationPath: "../secret.jpg")
    let local = LocalSource(root: root, uploads: uploads)
    let inside: Set<String> = [
        (local.root ?? "") + "/a.jpg", (local.uploads ?? "") + "/0123456789abcdef0123456789abcdef"
    ]
    return (local, inside)
}()

/// Checks a parsed job's source: a file source (`local:` or `upload:`) that resolves at all must
/// resolve to one of the two files inside its root, and read as their bytes. Anything else (the
/// canary outside the root, a directory, the other root's file) is a finding, made a crash here.
/// Remote sources are not checked.
public func checkContained(_ url: URL) {
    guard LocalSource.isFile(url), let file = try? files.local.file(for: url, quiet: true) else { return }
    let root = (url.scheme == LocalSource.uploadScheme ? files.local.uploads : files.local.root) ?? ""
    guard files.inside.contains(file.path), file.path.hasPrefix(root + "/") else {
        fatalError("file source escaped its root: \(url) -> \(file.path)")
    }
    guard let read = try? files.local.read(file, maxBytes: 16), read.data == Data("in".utf8) else {
        fatalError("file source \(url) resolved to \(file.path) but did not read as the file inside the root")
    }
}
