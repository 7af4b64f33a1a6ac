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

/// The few POSIX file operations the disk storage needs.
enum DiskFileIO {
    /// Linux's `O_NOATIME` (not exported to Swift, it needs `_GNU_SOURCE`): reads leave the atime,
    /// which the storage uses as its own record of last access.
    static let noAccessTime: Int32 = 0o1000000
    /// What `stat` says about a file, in the terms the storage uses.
    struct FileInfo: Sendable {
        var inode: UInt64
        var size: Int
        var isDirectory: Bool
        var isRegular: Bool
        /// Modification time: whole seconds and nanoseconds (an entry's expiry and seal).
        var mtimeSeconds: Int64
        var mtimeNanoseconds: Int64
        /// Access time, seconds since 1970 (an entry's last access).
        var accessed: TimeInterval
        /// Status change time, seconds since 1970 (set by the kernel at every write or time change).
        var changed: TimeInterval

        init(_ info: stat) {
            inode = UInt64(info.st_ino)
            size = Int(info.st_size)
            isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            isRegular = (info.st_mode & S_IFMT) == S_IFREG
            mtimeSeconds = Int64(info.st_mtim.tv_sec)
            mtimeNanoseconds = Int64(info.st_mtim.tv_nsec)
            accessed = TimeInterval(info.st_atim.tv_sec) + TimeInterval(info.st_atim.tv_nsec) / 1e9
            changed = TimeInterval(info.st_ctim.tv_sec) + TimeInterval(info.st_ctim.tv_nsec) / 1e9
        }

        /// Modification time, seconds since 1970.
        var modified: TimeInterval { TimeInterval(mtimeSeconds) + TimeInterval(mtimeNanoseconds) / 1e9 }
        /// Whether the nanoseconds of the mtime are 0, as the storage leaves them (see ``DiskEntryFile``).
        var isSealed: Bool { isRegular && mtimeNanoseconds == 0 }
    }

    static func timeSpec(_ seconds: TimeInterval) -> timespec {
        let whole = seconds.rounded(.down)
        return timespec(tv_sec: Int(whole), tv_nsec: Int(min(max((seconds - whole) * 1e9, 0), 999_999_999)))
    }

    /// The atomic write of a disk entry: `data` and `trailer` written whole to the new file `temp`
    /// (``writeNew(_:_:trailer:accessed:mtimeSeconds:)``), then renamed over `path`. A reader sees
    /// the whole old file, the whole new one, or none; a failed write leaves no temporary file.
    /// Returns the new file's inode.
    static func writeAtomically(
        _ path: String, through temp: String, _ data: Data, trailer: [UInt8], accessed: TimeInterval, mtimeSeconds: Int64
    ) throws(FileIOError) -> UInt64 {
        let inode = try writeNew(temp, data, trailer: trailer, accessed: accessed, mtimeSeconds: mtimeSeconds)
        do throws(FileIOError) { try renameFile(temp, path) } catch {
            try? removeFile(temp)
            throw error
        }
        return inode
    }

    /// Creates `path` (which must not exist) with `data` then `trailer` in one `writev`, sets its
    /// times (atime `accessed`, mtime `mtimeSeconds` with 0 ns: the seal) and returns its inode.
    static func writeNew(_ path: String, _ data: Data, trailer: [UInt8], accessed: TimeInterval, mtimeSeconds: Int64) throws(FileIOError) -> UInt64 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileIOError(step: "creating \(path)", code: errno) }
        var failure: Int32 = 0
        data.withUnsafeBytes { raw in
            trailer.withUnsafeBytes { tail in
                var vectors = [
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress), iov_len: raw.count),
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: tail.baseAddress), iov_len: tail.count)
                ]
                var remaining = raw.count + tail.count
                var first = 0
                while remaining > 0 {
                    let written = vectors.withUnsafeMutableBufferPointer { writev(fd, $0.baseAddress! + first, Int32(2 - first)) }
                    if written < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if written == 0 {
                        failure = EIO
                        return
                    }
                    remaining -= written
                    var advance = written
                    while advance > 0, first < 2 {
                        let length = vectors[first].iov_len
                        if advance >= length {
                            advance -= length
                            vectors[first].iov_len = 0
                            first += 1
                        } else {
                            vectors[first].iov_base = vectors[first].iov_base.map { $0 + advance }
                            vectors[first].iov_len = length - advance
                            advance = 0
                        }
                    }
                }
            }
        }
        var times = [timeSpec(accessed), timespec(tv_sec: Int(mtimeSeconds), tv_nsec: 0)]
        if failure == 0, futimens(fd, &times) != 0 { failure = errno }
        var info = stat()
        if failure == 0, fstat(fd, &info) != 0 { failure = errno }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw FileIOError(step: "writing \(path)", code: failure)
        }
        return UInt64(info.st_ino)
    }

    /// Sets a file's atime and mtime (`mtimeSeconds`, 0 ns); `false` when it could not.
    @discardableResult
    static func setTimes(_ path: String, accessed: TimeInterval, mtimeSeconds: Int64) -> Bool {
        var times = [timeSpec(accessed), timespec(tv_sec: Int(mtimeSeconds), tv_nsec: 0)]
        return utimensat(AT_FDCWD, path, &times, 0) == 0
    }

    /// A whole file read with one `read` into memory it owns (so the bytes can become a `Data`
    /// without a copy), with what `fstat` said of it. Exactly one of `data(count:)` and `discard()`
    /// must be called.
    struct Contents {
        var bytes: UnsafeMutableRawPointer?
        var info: FileInfo

        /// Hands the first `count` bytes over to a `Data`, which frees them.
        func data(count: Int) -> Data {
            guard let bytes, count > 0 else {
                free(self.bytes)
                return Data()
            }
            return Data(bytesNoCopy: bytes, count: count, deallocator: .free)
        }

        func discard() { free(bytes) }
    }

    enum ReadFailure: Error {
        case missing
        case unreadable(FileInfo?)
    }

    /// Opens `path` (without touching its atime where allowed: the storage keeps atimes itself)
    /// and reads it whole when it is a sealed regular file (see ``DiskEntryFile``).
    static func readWhole(_ path: String) -> Result<Contents, ReadFailure> {
        var fd = open(path, O_RDONLY | O_CLOEXEC | noAccessTime)
        if fd < 0, errno == EPERM { fd = open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return .failure(errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable(nil)) }
        defer { close(fd) }
        var raw = stat()
        guard fstat(fd, &raw) == 0 else { return .failure(.unreadable(nil)) }
        let info = FileInfo(raw)
        // Unsealed (foreign, or modified in place): not an entry, whatever its size; not read.
        guard info.isSealed else { return .failure(.unreadable(info)) }
        let size = info.size
        guard size > 0, let buffer = malloc(size) else { return .failure(.unreadable(info)) }
        var offset = 0
        while offset < size {
            let got = read(fd, buffer + offset, size - offset)
            if got < 0, errno == EINTR { continue }
            if got <= 0 {
                free(buffer)
                return .failure(.unreadable(info))
            }
            offset += got
        }
        return .success(Contents(bytes: buffer, info: info))
    }

    /// Parses the trailer of the entry file `name` in the directory `dirfd`, reading only its end
    /// (one `pread` of at most 512 bytes, a second for a longer key). `nil` when it is not an entry.
    static func readTrailer(_ dirfd: Int32, _ name: String) -> (DiskEntryFile, FileInfo)? {
        let fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | noAccessTime)
        let opened = fd >= 0 ? fd : (errno == EPERM ? openat(dirfd, name, O_RDONLY | O_CLOEXEC) : -1)
        guard opened >= 0 else { return nil }
        defer { close(opened) }
        var raw = stat()
        guard fstat(opened, &raw) == 0 else { return nil }
        let info = FileInfo(raw)
        guard info.isSealed, info.size >= DiskEntryFile.fixedSize else { return nil }
        var want = min(info.size, 512)
        for _ in 0..<2 {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: want, alignment: 8)
            defer { buffer.deallocate() }
            let got = pread(opened, buffer.baseAddress, want, off_t(info.size - want))
            guard got == want else { return nil }
            var needed = 0
            if let entry = DiskEntryFile.parse(tail: UnsafeRawBufferPointer(buffer), fileSize: info.size, needed: &needed) {
                return (entry, info)
            }
            guard needed > want else { return nil }
            want = needed
        }
        return nil
    }

    /// `stat` of `path`; `nil` when it does not exist or cannot be examined.
    static func info(_ path: String) -> FileInfo? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileInfo(info)
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

    /// The names in a directory with their inode numbers as `readdir` gives them (`d_ino`, no
    /// `stat`); `nil` when it cannot be listed.
    static func listWithInodes(_ path: String) -> [(name: String, inode: UInt64)]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [(name: String, inode: UInt64)] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append((name, UInt64(entry.pointee.d_ino))) }
        }
        return names
    }

    /// Whether a process with this id exists (is not reported missing by `kill(pid, 0)`).
    static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}
