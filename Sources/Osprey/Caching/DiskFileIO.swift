import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: the step it was doing and `errno`.
struct FileIOError: Error, Sendable {
    var step: String
    var code: Int32
    var message: String { "\(step): \(String(cString: strerror(code)))" }
}

/// The few POSIX file operations the disk storage needs, with the stamp (inode + mtime) of what was written or read
/// (so that an index can name the exact file it belongs to).
enum DiskFileIO {
    /// What identifies one version of a file: its inode and its modification time in nanoseconds.
    /// (An inode number alone can be reused as soon as a file is deleted.)
    struct Stamp: Equatable, Sendable {
        var inode: UInt64
        var modifiedNanoseconds: Int64

        init(inode: UInt64, modifiedNanoseconds: Int64) {
            self.inode = inode
            self.modifiedNanoseconds = modifiedNanoseconds
        }

        init(_ info: stat) {
            self.init(inode: UInt64(info.st_ino), modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
        }
    }

    struct FileInfo {
        var stamp: Stamp
        var size: Int
        var isDirectory: Bool
        /// Modification time, seconds since 1970.
        var modified: TimeInterval
    }

    /// Creates `path` (which must not exist), writes `data`, returns the new file's stamp.
    static func writeNew(_ path: String, _ data: Data) throws(FileIOError) -> Stamp {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileIOError(step: "creating \(path)", code: errno) }
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = write(fd, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        var info = stat()
        if failure == 0, fstat(fd, &info) != 0 { failure = errno }
        close(fd)
        if failure != 0 {
            unlink(path)
            throw FileIOError(step: "writing \(path)", code: failure)
        }
        return Stamp(info)
    }

    /// The whole content of `path` with the stamp of the file it was read from; `nil` when it cannot be read.
    static func readFile(_ path: String) -> (data: Data, stamp: Stamp)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(info.st_size)
        var data = Data(count: size)
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < size {
                let got = read(fd, base + offset, size - offset)
                if got < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                if got == 0 { return false }
                offset += got
            }
            return true
        }
        return complete ? (data, Stamp(info)) : nil
    }

    /// `stat` of `path`; `nil` when it does not exist or cannot be examined.
    static func info(_ path: String) -> FileInfo? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileInfo(stamp: Stamp(info), size: Int(info.st_size),
                        isDirectory: (info.st_mode & S_IFMT) == S_IFDIR,
                        modified: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }

    static func renameFile(_ from: String, _ to: String) throws(FileIOError) {
        guard rename(from, to) == 0 else { throw FileIOError(step: "renaming \(from) to \(to)", code: errno) }
    }

    /// Removes a file; a missing file is not an error.
    static func removeFile(_ path: String) throws(FileIOError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw FileIOError(step: "removing \(path)", code: errno) }
    }

    /// Creates `path` and its missing parents.
    static func makeDirectories(_ path: String) throws(FileIOError) {
        if let existing = info(path) {
            guard existing.isDirectory else { throw FileIOError(step: "creating directory \(path)", code: ENOTDIR) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path, parent != "/" {
            try makeDirectories(parent)
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw FileIOError(step: "creating directory \(path)", code: errno)
        }
    }

    /// The names in a directory (without `.` and `..`); `nil` when it cannot be listed.
    static func list(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether a process with this id exists (is not reported missing by `kill(pid, 0)`).
    static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}
