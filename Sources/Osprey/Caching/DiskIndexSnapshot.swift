import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A copy of a ``DiskEntryIndex`` in one file of the cache directory, so that an open need not read
/// every entry's trailer.
///
/// `.osprey-index-v2` holds a copy of the index (every record's file name,
/// inode, key, size, creation, expiration rule, expiry and last access, under a version header
/// and a SHA-256). It is written whole to a temporary file then renamed into place, when the
/// index changed: at the end of an open that had to read trailers, after every clean or trim,
/// with each lazy access-record write, and when the storage is deinitialised.
/// - **Trusted** per file: at open, a listed file whose name and inode (`d_ino` from `readdir`,
///   no `stat`) are those of a snapshot record gets that record without being opened (entry
///   files are only ever replaced by a rename, which gives a new inode).
/// - **Not trusted** otherwise: a file of another name or inode (written by another instance
///   since) has its trailer read as before; a record whose file is not listed is dropped; a
///   snapshot that is missing, torn, truncated, of another magic or version, or fails its
///   checksum is ignored whole (the open reads every trailer, as after a crash, and then
///   writes a new snapshot).
/// - **Never served from**: a read still opens the file and checks its size, magic, key and seal,
///   and the trailer checksum the first time a snapshot record is read, so a stale record costs
///   a miss at worst. What a snapshot can get wrong is limited to sizes and times: a file whose
///   times another instance changed later (access records, extensions) keeps the snapshot's
///   until read (a clean checks the seal before removing an entry as expired), and an inode
///   reused for a new file of the same name keeps the old size until read. This instance
///   removes the snapshot before writing file times immediately (`accessRecordInterval` 0).
///
/// ```
/// magic      "OSPRIDX\n"
/// version    UInt32 LE (1)
/// reserved   UInt32 LE (0)
/// count      UInt64 LE
/// records    count × { inode UInt64, size UInt64, created, expires, lastAccess, policyValue
///                      (Float64 bits), keyLength UInt32, nameLength UInt16, policyKind UInt8,
///                      hasExpiry UInt8, name, key }  (all LE)
/// checksum   SHA-256 of everything before it
/// ```
/// Written to a temporary file then renamed over the old one: a reader sees a whole snapshot or
/// the previous one; a torn, foreign or other-version file fails the magic, sizes or checksum.
enum DiskIndexSnapshot {
    /// The file's name in the cache directory: a dot file (never taken for an entry, nor for the
    /// `.index/` directory of format 1) whose name says what it is.
    static let fileName = ".osprey-index-v2"
    static let magic: [UInt8] = Array("OSPRIDX\n".utf8)
    static let version: UInt32 = 1
    static let headerSize = 24
    static let recordFixedSize = 56
    static let checksumSize = 32

    /// Why a snapshot was not used.
    enum Failure: Error, Equatable {
        /// There is none (or it cannot be read).
        case missing
        /// Not a snapshot of this version (another magic or version).
        case foreign
        /// Truncated, torn or damaged: a size or the checksum does not match.
        case corrupt
    }

    /// The bytes of a snapshot of `entries` (hash → entry).
    static func encode(_ entries: [String: DiskEntryIndex.Entry]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + entries.count * (recordFixedSize + 160) + checksumSize)
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.append(contentsOf: magic)
        put(version)
        put(UInt32(0))
        put(UInt64(entries.count))
        for entry in entries.values {
            let (kind, value) = DiskEntryFile.encode(entry.policy)
            let name = entry.fileName.utf8
            let key = entry.key.utf8
            put(entry.inode)
            put(UInt64(max(entry.size, 0)))
            put(entry.created.bitPattern)
            put((entry.expires ?? 0).bitPattern)
            put(entry.lastAccess.bitPattern)
            put(value.bitPattern)
            put(UInt32(key.count))
            put(UInt16(name.count))
            put(kind)
            put(UInt8(entry.expires == nil ? 0 : 1))
            bytes.append(contentsOf: name)
            bytes.append(contentsOf: key)
        }
        bytes.append(contentsOf: SHA256.hash(data: bytes))
        return bytes
    }

    /// The entries (hash → entry) of a snapshot's bytes, marked as not yet verified against their files.
    static func decode(_ data: UnsafeRawBufferPointer) throws(Failure) -> [String: DiskEntryIndex.Entry] {
        guard data.count >= headerSize + checksumSize, magic.elementsEqual(data.prefix(magic.count)) else { throw .foreign }
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: data.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        guard load(8, UInt32.self) == version else { throw .foreign }
        let body = data.count - checksumSize
        guard SHA256.hash(data: UnsafeRawBufferPointer(rebasing: data[..<body])).elementsEqual(data[body...]) else { throw .corrupt }
        let count = load(16, UInt64.self)
        guard count <= UInt64(body / recordFixedSize) else { throw .corrupt }
        var entries: [String: DiskEntryIndex.Entry] = [:]
        entries.reserveCapacity(Int(count))
        var offset = headerSize
        for _ in 0..<Int(count) {
            guard offset + recordFixedSize <= body else { throw .corrupt }
            let keyLength = Int(load(offset + 48, UInt32.self))
            let nameLength = Int(load(offset + 52, UInt16.self))
            let nameStart = offset + recordFixedSize
            guard keyLength <= body, nameStart + nameLength + keyLength <= body,
                let policy = DiskEntryFile.decode(kind: load(offset + 54, UInt8.self), value: Double(bitPattern: load(offset + 40, UInt64.self))),
                let name = String(validating: UnsafeRawBufferPointer(rebasing: data[nameStart..<(nameStart + nameLength)]), as: UTF8.self),
                let key = String(
                    validating: UnsafeRawBufferPointer(rebasing: data[(nameStart + nameLength)..<(nameStart + nameLength + keyLength)]), as: UTF8.self
                )
            else { throw .corrupt }
            let size = load(offset + 8, UInt64.self)
            guard size <= UInt64(Int.max / 2) else { throw .corrupt }
            var entry = DiskEntryIndex.Entry(
                fileName: name, inode: load(offset, UInt64.self), key: key, size: Int(size),
                created: Double(bitPattern: load(offset + 16, UInt64.self)), policy: policy,
                expires: load(offset + 55, UInt8.self) == 0 ? nil : Double(bitPattern: load(offset + 24, UInt64.self)),
                lastAccess: Double(bitPattern: load(offset + 32, UInt64.self)))
            entry.verified = false
            entries[DiskStorage.Backend.hashPart(name)] = entry
            offset = nameStart + nameLength + keyLength
        }
        guard offset == body else { throw .corrupt }
        return entries
    }

    /// Reads and decodes the snapshot in `directory`.
    static func read(directory: String) throws(Failure) -> [String: DiskEntryIndex.Entry] {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + fileName), options: .uncached) } catch { throw .missing }
        // `withUnsafeBytes` rethrows untyped errors: carry the typed one out in a Result.
        return try data.withUnsafeBytes { raw in Result { () throws(Failure) in try decode(raw) } }.get()
    }

    /// Writes a snapshot of `entries` to `directory` through the temporary file `temp` (renamed into place).
    static func write(_ entries: [String: DiskEntryIndex.Entry], directory: String, temp: String) throws(FileIOError) {
        let bytes = encode(entries)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileIOError(step: "creating \(temp)", code: errno) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    failure = written < 0 ? errno : EIO
                    return
                }
                offset += written
            }
        }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temp, directory + "/" + fileName) != 0 { failure = errno }
        if failure != 0 {
            unlink(temp)
            throw FileIOError(step: "writing the index snapshot \(temp)", code: failure)
        }
    }
}

extension DiskStorage.Backend {
    /// Takes the snapshot's record of every listed entry file whose name and inode (`d_ino`) it
    /// matches, without touching the file; returns how many (`nil` when there was no usable snapshot).
    func adoptSnapshot(listing: [(name: String, inode: UInt64)]) -> Int? {
        guard let records = try? DiskIndexSnapshot.read(directory: directory) else { return nil }
        return state.withLock { state in
            var adopted = 0
            for (name, inode) in listing where !name.hasPrefix(".") {
                let hash = Self.hashPart(name)
                // An entry already known (a read that ran before this pass) is fresher than the snapshot.
                guard let record = records[hash], record.fileName == name, record.inode == inode, state.index[hash] == nil else { continue }
                state.index.insert(record, hash: hash)
                adopted += 1
            }
            // Nothing to rewrite when the directory is exactly what the snapshot says.
            if adopted == records.count, adopted == state.index.count { state.snapshotGeneration = state.index.generation }
            return adopted
        }
    }

    /// Writes the index to the snapshot file unless it is already current. Serialised, so that an
    /// older snapshot never replaces a newer one.
    func writeSnapshotIfStale() {
        snapshotLock.lock()
        defer { snapshotLock.unlock() }
        let (entries, generation) = state.withLock { state -> ([String: Entry]?, Int) in
            state.snapshotGeneration == state.index.generation ? (nil, 0) : (state.index.all, state.index.generation)
        }
        guard let entries else { return }
        do throws(FileIOError) {
            try DiskIndexSnapshot.write(entries, directory: directory, temp: tempPath())
            state.withLock {
                $0.snapshotGeneration = max($0.snapshotGeneration, generation)
                $0.snapshotOnDisk = true
            }
        } catch {
            // Not fatal: the next open reads the trailers of what the old snapshot does not match.
        }
    }
}
