import Foundation

/// Building the index, re-synchronising it with the directory, and cleaning: the exclusive
/// (barrier) work of ``DiskStorage/Backend``.
extension DiskStorage.Backend {
    /// A file in the directory that is not a valid entry.
    struct CorruptFile {
        var fileName: String
        var size: Int
    }

    /// The open-time pass: removes stale temporaries (when `cleaning`), builds the index, and (when
    /// `cleaning`) removes corrupt files and enforces the size limit.
    func openPass(cleaning: Bool) -> DiskStorage.CleanReport {
        if cleaning { removeStaleTemporaryFiles() }
        var report = DiskStorage.CleanReport()
        // One listing with inode numbers: the snapshot's records of unchanged files are taken as they are.
        let listing = DiskFileIO.listWithInodes(directory)
        if let listing { _ = adoptSnapshot(listing: listing) }
        let corrupt = resync(removingCorrupt: cleaning, listing: listing?.map(\.name))
        if cleaning {
            report = trim(removeExpired: false, enforceSize: true)
            report.removed.insert(contentsOf: corrupt, at: report.removed.prefix { $0.reason == .expired }.count)
        } else {
            state.withLock {
                report.remainingCount = $0.index.count
                report.remainingSize = $0.index.totalSize
            }
        }
        // After a scan (no snapshot, or an outdated one), so that the next open, even after a crash, is quick.
        writeSnapshotIfStale()
        return report
    }

    /// Lists the directory and brings the index in line with it: files it does not know have their
    /// trailers read (adopted when valid), entries whose file is gone are dropped. Invalid files
    /// are removed when `removingCorrupt` (unsealed ones only once older than the grace period)
    /// and returned as removed entries. `listing`: the directory's names when the
    /// caller has just listed it.
    @discardableResult
    func resync(removingCorrupt: Bool, listing: [String]? = nil) -> [DiskStorage.RemovedEntry] {
        guard let names = listing ?? DiskFileIO.list(directory) else {
            state.withLock { $0.index.removeAll() }
            return []
        }
        let dirfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirfd >= 0 else { return [] }
        defer { close(dirfd) }
        // A copy-on-write value: taking it is O(1).
        let known = state.withLock { $0.index.all }
        // Names are unique: when as many listed names as there are known entries match, no entry's
        // file is gone, and the set of listed names need not be built.
        var matched = 0
        var unknown: [String] = []
        for name in names where !name.hasPrefix(".") {
            if known[Self.hashPart(name)]?.fileName == name {
                matched += 1
            } else {
                unknown.append(name)
            }
        }
        var gone: [String] = []
        if matched < known.count {
            let listed = Set(names)
            gone = known.compactMap { listed.contains($0.value.fileName) ? nil : $0.key }
        }
        let trailers = Self.readTrailers(dirfd, unknown)
        var adopted: [(String, Entry)] = []
        var corrupt: [CorruptFile] = []
        let wallNow = Date().timeIntervalSince1970
        for (name, trailer) in zip(unknown, trailers) {
            let hash = Self.hashPart(name)
            if let (file, info) = trailer, fileName(hash: hash, key: file.key) == name || known[hash] == nil {
                adopted.append((hash, Entry(fileName: name, file: file, info: info)))
                continue
            }
            var raw = stat()
            guard fstatat(dirfd, name, &raw, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let info = DiskFileIO.FileInfo(raw)
            if info.isDirectory { continue }
            // An unsealed young file may be another (older) writer's: leave it until the grace period is over.
            if !info.isSealed, wallNow - info.modified < config.recoveryGracePeriod { continue }
            corrupt.append(CorruptFile(fileName: name, size: info.size))
        }
        state.withLock { state in
            for hash in gone { state.index.remove(hash) }
            for (hash, entry) in adopted where state.index[hash] == nil || known[hash] != nil {
                state.index.insert(entry, hash: hash)
            }
        }
        guard removingCorrupt else { return [] }
        var removed: [DiskStorage.RemovedEntry] = []
        for file in corrupt where unlinkat(dirfd, file.fileName, 0) == 0 {
            removed.append(.init(key: nil, fileName: file.fileName, size: file.size, reason: .corrupt))
        }
        return removed
    }

    /// The trailers of `names` in `dirfd` whose key hashes to the name, read on every core when
    /// there are many (the open of a large directory is mostly these reads).
    static func readTrailers(_ dirfd: Int32, _ names: [String]) -> [(DiskEntryFile, DiskFileIO.FileInfo)?] {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, names.count / 2_000)
        guard workers > 1 else { return names.map { readTrailer(dirfd, $0) } }
        let parts = Locked([Int: [(DiskEntryFile, DiskFileIO.FileInfo)?]]())
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let part = stride(from: worker, to: names.count, by: workers).map { readTrailer(dirfd, names[$0]) }
            parts.withLock { $0[worker] = part }
        }
        return parts.withLock { parts in
            (0..<names.count).map { parts[$0 % workers]![$0 / workers] }
        }
    }

    static func readTrailer(_ dirfd: Int32, _ name: String) -> (DiskEntryFile, DiskFileIO.FileInfo)? {
        guard let found = DiskFileIO.readTrailer(dirfd, name), hash(found.0.key) == hashPart(name) else { return nil }
        return found
    }

    /// One cleaning pass: writes pending access records, re-synchronises, removes corrupt files,
    /// then (optionally) expired entries, then least recently accessed ones while over the limit.
    func clean(removeExpired: Bool, enforceSize: Bool) -> DiskStorage.CleanReport {
        flushAccessRecords(snapshot: false)
        let corrupt = resync(removingCorrupt: true)
        var report = trim(removeExpired: removeExpired, enforceSize: enforceSize)
        let expiredCount = report.removed.prefix { $0.reason == .expired }.count
        report.removed.insert(contentsOf: corrupt, at: expiredCount)
        writeSnapshotIfStale()
        return report
    }

    /// Removes expired entries (when asked) then, over the size limit, least recently accessed ones
    /// down to `sizeLimit * trimRatio`, choosing from the index alone. The report lists them in
    /// that order; the files are unlinked in inode order, as `rm -r` does in a large directory
    /// (fts): neighbouring inodes share their table blocks.
    func trim(removeExpired: Bool, enforceSize: Bool) -> DiskStorage.CleanReport {
        typealias Position = Dictionary<String, Entry>.Index
        var report = DiskStorage.CleanReport()
        let now = config.now().timeIntervalSince1970
        let limit = config.sizeLimit
        let (total, count) = state.withLock { ($0.index.totalSize, $0.index.count) }
        // Nothing to choose: spare the sort (an open of an unlimited or small enough storage).
        guard removeExpired || (enforceSize && limit > 0 && total > limit) else {
            report.remainingCount = count
            report.remainingSize = total
            return report
        }
        // A copy-on-write value and positions in it: no entry is copied to be sorted.
        let (all, ordered, current) = state.withLock { ($0.index.all, $0.index.positionsByLastAccess(), $0.index.totalSize) }
        var remaining = current
        var victims: [(position: Position, reason: DiskStorage.RemovalReason)] = []
        var chosen = [Bool](repeating: false, count: ordered.count)
        if removeExpired || (enforceSize && limit > 0 && current > limit) {
            for (rank, position) in ordered.enumerated() where all.values[position].isExpired(at: now) {
                let (hash, entry) = all[position]
                // Another instance may have extended it since this record was read or snapshotted: the seal says.
                if let info = DiskFileIO.info(directory + "/" + entry.fileName), info.inode == entry.inode, info.isSealed,
                    DiskEntryFile.expiry(sealSeconds: info.mtimeSeconds).map({ $0 > now }) ?? true
                {
                    state.withLock { $0.index.setExpiry(hash, inode: entry.inode, DiskEntryFile.expiry(sealSeconds: info.mtimeSeconds)) }
                    continue
                }
                victims.append((position, .expired))
                chosen[rank] = true
                remaining -= entry.size
            }
        }
        if enforceSize, limit > 0, remaining > limit {
            let target = Int(Double(limit) * min(max(config.trimRatio, 0), 1))
            for (rank, position) in ordered.enumerated() where remaining > target && !chosen[rank] {
                victims.append((position, .sizeLimit))
                remaining -= all.values[position].size
            }
        }
        guard !victims.isEmpty else {
            report.remainingCount = count
            report.remainingSize = current
            return report
        }
        var removed = [Bool](repeating: false, count: victims.count)
        // Relative to the directory's descriptor (as `rm` does): no walk of the directory's path per file.
        let dirfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if dirfd >= 0 { close(dirfd) } }
        let byInode = victims.indices.map { (inode: all.values[victims[$0].position].inode, victim: $0) }.sorted { $0.inode < $1.inode }
        for (_, victim) in byInode {
            let name = all.values[victims[victim].position].fileName
            removed[victim] = (dirfd >= 0 ? unlinkat(dirfd, name, 0) : unlink(directory + "/" + name)) == 0 || errno == ENOENT
        }
        report.removed.reserveCapacity(victims.count)
        for (victim, (position, reason)) in victims.enumerated() where removed[victim] {
            let entry = all.values[position]
            report.removed.append(.init(key: entry.key, fileName: entry.fileName, size: entry.size, reason: reason))
        }
        state.withLock { state in
            for (victim, (position, _)) in victims.enumerated() where removed[victim] {
                state.index.remove(all.keys[position], ifInode: all.values[position].inode)
            }
            report.remainingCount = state.index.count
            report.remainingSize = state.index.totalSize
        }
        return report
    }

    func removeAllNow() throws(OspreyError) {
        var firstError: OspreyError?
        for name in DiskFileIO.list(directory) ?? [] where !name.hasPrefix(".") {
            let path = directory + "/" + name
            if DiskFileIO.info(path)?.isDirectory == true { continue }
            do throws(FileIOError) { try DiskFileIO.removeFile(path) } catch {
                firstError = firstError ?? .cache(.cannotRemoveFile(path: path, message: error.message))
            }
        }
        state.withLock { $0.index.removeAll() }
        if let firstError { throw firstError }
    }

    /// Removes temporary files whose writer is gone (its pid no longer exists) or older than an hour.
    func removeStaleTemporaryFiles() {
        let me = getpid()
        let wallNow = Date().timeIntervalSince1970
        for name in DiskFileIO.list(tempDirectory) ?? [] {
            let path = tempDirectory + "/" + name
            let pid = Int32(name.prefix { $0 != "-" })
            let writerGone = pid.map { $0 != me && !DiskFileIO.processExists($0) } ?? true
            // ctime, not mtime: a sealed temporary file's mtime is its entry's expiry.
            let old = DiskFileIO.info(path).map { wallNow - $0.changed > 3_600 } ?? false
            if writerGone || old {
                try? DiskFileIO.removeFile(path)
            }
        }
    }
}
