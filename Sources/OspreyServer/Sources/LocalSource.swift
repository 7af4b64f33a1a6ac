import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sources read from disk: files under `--local-root` (imgproxy's `local:///path`, thumbor's bare
/// paths) and uploads under `--upload-dir` (thumbor's `/image/<id>` ids, `upload://<id>` in the
/// imgproxy grammar).
///
/// The parsers turn such a source into a URL of scheme ``localScheme`` or ``uploadScheme``; this
/// type resolves it to a file under its root, or refuses it with 404 (never 403, so that the
/// layout cannot be probed) and logs why: `..` in the path (also once or twice percent-encoded),
/// an absolute path, a NUL byte, a path whose symbolic links resolve outside the root, anything
/// that is not a regular file. The file's inode, size and modification time are its version: they
/// give its `ETag` and `Last-Modified`, the pipeline's decode key and the result cache's key, so a
/// changed (or replaced) file makes new variants.
struct LocalSource: Sendable {
    /// The scheme of files under the local root: `local:///path/in/root.jpg`.
    static let localScheme = "local"
    /// The scheme of uploads: `upload:///<32 hex>`.
    static let uploadScheme = "upload"

    /// A file resolved under its root, with its version.
    struct File: Sendable, Equatable {
        /// The resolved path (symbolic links followed), under the root.
        var path: String
        /// Bytes, from `stat`.
        var size: Int
        /// Modification time, from `stat`.
        var modified: Date
        /// `inode-size-mtime(ns)` in hex: changes whenever the file is written or replaced.
        var version: String

        /// The `ETag` of the file's bytes (quoted, from ``version``).
        var etag: String { "\"\(version)\"" }
        /// The `Last-Modified` of the file.
        var lastModified: String { HTTPDate.format(modified) }
    }

    /// The resolved local root (`--local-root`); `nil`: local sources are refused.
    let root: String?
    /// The resolved upload directory; `nil`: upload sources are refused.
    let uploads: String?
    let logger: Logger

    /// Roots resolved once (symbolic links followed), so that a resolved file path can be compared
    /// with them; refusals are logged to `logger` (default: nowhere, for tools and fuzzers).
    init(root: URL?, uploads: URL?, logger: Logger = Logger(label: "osprey.local", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.root = root.flatMap { Self.realPath($0.path) }
        self.uploads = uploads.flatMap { Self.realPath($0.path) }
        self.logger = logger
    }

    /// Whether `url` names a file source (either scheme).
    static func isFile(_ url: URL) -> Bool {
        url.scheme == localScheme || url.scheme == uploadScheme
    }

    /// The URL of `path` (relative to the local root, as received: one level of percent-encoding
    /// already removed) for a job. The path is kept exactly, percent-encoded into the URL; it is
    /// checked when the source is read (``file(for:)``), where a refusal is logged.
    /// `scheme` is ``localScheme`` (default) or ``uploadScheme`` (the path is then `/<id>`).
    static func url(path: String, scheme: String = localScheme) -> URL {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "%;?#")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        return URL(string: "\(scheme)://" + (encoded.hasPrefix("/") ? "" : "/") + encoded) ?? URL(string: "\(scheme):///")!
    }

    /// The URL of the upload `id`.
    static func url(upload id: String) -> URL {
        url(path: "/" + id, scheme: uploadScheme)
    }

    /// The path text of a file URL, as given to ``url(path:)``.
    static func pathText(of url: URL) -> String {
        let encoded = url.path(percentEncoded: true)
        return encoded.removingPercentEncoding ?? encoded
    }

    /// The file `url` names, resolved and checked; 404 when it is refused (logged unless `quiet`)
    /// or missing.
    func file(for url: URL, quiet: Bool = false) throws(ServerError) -> File {
        let text = Self.pathText(of: url)
        let isUpload = url.scheme == Self.uploadScheme
        guard let root = isUpload ? self.uploads : self.root else {
            throw refused(text, quiet: quiet, why: isUpload ? "uploads are not enabled (--upload)" : "local sources are not enabled (--local-root)")
        }
        if let why = Self.traversal(in: text) { throw refused(text, quiet: quiet, why: why) }
        if isUpload, !UploadStore.isID(String(text.dropFirst())) { throw refused(text, quiet: quiet, why: "not an upload id") }
        guard let resolved = Self.realPath(root + text) else {
            throw ServerError.notFound("source \(Self.sourceName(url)) does not exist")
        }
        guard resolved.hasPrefix(root + "/") else { throw refused(text, quiet: quiet, why: "resolves outside the root, to \(resolved)") }
        var info = stat()
        guard stat(resolved, &info) == 0, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG) else {
            throw refused(text, quiet: quiet, why: "not a regular file")
        }
        return File(path: resolved, stat: info)
    }

    /// The version of the file `url` names, for cache keys; `"-"` when it cannot be read (the
    /// request then gets its 404 from ``file(for:)``).
    func version(of url: URL) -> String {
        (try? file(for: url, quiet: true).version) ?? "-"
    }

    /// The bytes of `file`, at most `maxBytes` (413 beyond); the file is opened without following
    /// a symbolic link in its last component, and its bytes are those of the version read.
    func read(_ file: File, maxBytes: Int) throws(ServerError) -> (data: Data, file: File) {
        guard file.size <= maxBytes else {
            throw ServerError.tooLarge("source file is \(file.size) bytes, more than the limit of \(maxBytes)")
        }
        let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw ServerError.notFound("source file cannot be opened (errno \(errno))") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ServerError.notFound("source file cannot be read (errno \(errno))") }
        let opened = File(path: file.path, stat: info)
        guard opened.size <= maxBytes else {
            throw ServerError.tooLarge("source file is \(opened.size) bytes, more than the limit of \(maxBytes)")
        }
        var data = Data(count: opened.size)
        var done = 0
        let ok = data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Bool in
            while done < opened.size {
                let count = Glibc.read(descriptor, buffer.baseAddress! + done, opened.size - done)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return false }
                done += count
            }
            return true
        }
        guard ok || opened.size == 0 else { throw ServerError.notFound("source file was truncated while read") }
        return (data, opened)
    }

    /// Why `text` (a path relative to a root, starting with `/`) is refused before touching the
    /// disk, or `nil`: NUL, an absolute path (`//…`), or `.`/`..` components once, twice or three
    /// times percent-decoded.
    static func traversal(in text: String) -> String? {
        if text.contains("\0") { return "contains a NUL byte" }
        guard text.hasPrefix("/"), !text.hasPrefix("//"), text.count > 1 else { return "not a relative path" }
        var form = text
        for _ in 0..<3 {
            if form.contains("\0") { return "contains an encoded NUL byte" }
            let components = form.split(separator: "/", omittingEmptySubsequences: false)
            if components.contains(where: { $0 == ".." || $0 == "." }) { return "contains a dot segment" }
            if form.contains("\\") { return "contains a backslash" }
            guard let decoded = form.removingPercentEncoding, decoded != form else { break }
            form = decoded
        }
        return nil
    }

    private func refused(_ text: String, quiet: Bool, why: String) -> ServerError {
        if !quiet {
            logger.warning(
                "local source refused", metadata: ["path": .string(text.debugDescription), "reason": .string(why)])
        }
        return .notFound("source not found")
    }

    private static func sourceName(_ url: URL) -> String {
        "\(url.scheme ?? "local")://\(pathText(of: url))"
    }

    /// `path` with symbolic links resolved, or `nil` when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension LocalSource.File {
    /// A file at `path` with the version `stat` gives.
    init(path: String, stat info: stat) {
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        self.init(
            path: path, size: Int(info.st_size),
            modified: Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)),
            version: "\(String(info.st_ino, radix: 16))-\(String(info.st_size, radix: 16))-\(String(nanoseconds, radix: 16))")
    }
}
