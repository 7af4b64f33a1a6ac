import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The uploads' directory (`--upload-dir`), which several instances may share.
///
/// An upload is one file named by its id (32 lowercase hex digits, thumbor's `uuid4().hex`). It is
/// written crash-safely: the bytes go to a hidden temporary file in the same directory
/// (`.upload-<id>-<random>`), which is flushed to disk (`fsync`) and then renamed over the id
/// (atomic within a file system), and the directory is flushed so that the rename survives a power
/// loss. A process killed while writing leaves at most a hidden temporary file, never a listed,
/// torn upload; temporary files older than an hour are removed when a server starts. A reader
/// opens either the old or the new file, never a mix.
struct UploadStore: Sendable {
    /// The directory.
    let directory: URL
    let logger: Logger

    /// A store in `directory`, created when missing; stale temporary files (older than an hour,
    /// left by a killed writer) are removed.
    init(directory: URL, logger: Logger) throws(ServerError) {
        self.directory = directory
        self.logger = logger
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ServerError(status: 500, reason: "cannot create the upload directory \(directory.path): \(error)")
        }
        removeStaleTemporaryFiles(olderThan: 3600)
    }

    /// Whether `text` is an upload id: 32 lowercase hex digits.
    static func isID(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// A new random id.
    static func newID() -> String {
        UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// The path of the upload `id`.
    func path(of id: String) -> String {
        directory.appendingPathComponent(id).path
    }

    /// Whether the upload `id` exists.
    func exists(_ id: String) -> Bool {
        var info = stat()
        return stat(path(of: id), &info) == 0 && (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG)
    }

    /// Writes `data` as the upload `id` (a new one, or a replacement), crash-safely.
    func write(_ data: Data, id: String) throws(ServerError) {
        let temporary = directory.appendingPathComponent(".upload-\(id)-\(UUID().uuidString.prefix(8))").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        let ok = data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Bool in
            while written < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return false }
                written += count
            }
            return true
        }
        let synced = ok && fsync(descriptor) == 0
        close(descriptor)
        guard synced || data.isEmpty else {
            unlink(temporary)
            throw failure("cannot write \(temporary)")
        }
        guard rename(temporary, path(of: id)) == 0 else {
            unlink(temporary)
            throw failure("cannot rename \(temporary) to \(id)")
        }
        syncDirectory()
    }

    /// Removes the upload `id`; `false` when it did not exist.
    func remove(_ id: String) throws(ServerError) -> Bool {
        if unlink(path(of: id)) == 0 {
            syncDirectory()
            return true
        }
        if errno == ENOENT { return false }
        throw failure("cannot remove \(id)")
    }

    /// The ids of the uploads (for tests and tooling): the files whose name is an id.
    func ids() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { Self.isID($0) }.sorted()
    }

    private func syncDirectory() {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    private func removeStaleTemporaryFiles(olderThan seconds: TimeInterval) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let limit = Date().addingTimeInterval(-seconds)
        for name in names where name.hasPrefix(".upload-") {
            let path = directory.appendingPathComponent(name).path
            let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            if modified < limit { unlink(path) }
        }
    }

    private func failure(_ what: String) -> ServerError {
        let error = ServerError(status: 500, reason: "upload storage: \(what) (errno \(errno))")
        logger.error("upload storage failed", metadata: ["reason": .string(error.reason)])
        return error
    }
}
