import Foundation

/// The synchronous file work of ``DiskStorage/Backend``, run on its queue.
extension DiskStorage.Backend {
    func storeNow(_ data: Data, forKey key: String, expiration: StorageExpiration?) throws(OspreyError) {
        let now = config.now().timeIntervalSince1970
        let policy = expiration ?? config.expiration
        let expires = DiskEntryIndex.expiry(of: policy, from: now)
        let hash = Self.hash(key)
        let name = fileName(hash: hash, key: key)
        try withKeyLock(hash) { () throws(OspreyError) in
            if let expires, expires <= now {
                try removeEntry(hash: hash, fileName: name)
                return
            }
            let dataPath = directory + "/" + name
            let previous = DiskFileIO.readFile(indexPath(hash)).flatMap { DiskEntryIndex(parsing: $0.data) }
            var retried = false
            while true {
                do throws(FileIOError) {
                    let tempData = tempPath()
                    let stamp = try DiskFileIO.writeNew(tempData, data)
                    let index = DiskEntryIndex(fileName: name, size: data.count, stamp: stamp, created: now,
                                               lastAccess: now, expires: expires, policy: policy, key: key)
                    let tempIndex = tempPath()
                    do throws(FileIOError) { _ = try DiskFileIO.writeNew(tempIndex, index.encoded()) } catch {
                        try? DiskFileIO.removeFile(tempData)
                        throw error
                    }
                    do throws(FileIOError) { try DiskFileIO.renameFile(tempData, dataPath) } catch {
                        try? DiskFileIO.removeFile(tempData)
                        try? DiskFileIO.removeFile(tempIndex)
                        throw error
                    }
                    do throws(FileIOError) { try DiskFileIO.renameFile(tempIndex, indexPath(hash)) } catch {
                        // The data in place has no index of its own: take the whole entry out.
                        try? DiskFileIO.removeFile(tempIndex)
                        try? DiskFileIO.removeFile(indexPath(hash))
                        try? DiskFileIO.removeFile(dataPath)
                        throw error
                    }
                    if let previous, previous.fileName != name {
                        try? DiskFileIO.removeFile(directory + "/" + previous.fileName)
                    }
                    account(data.count - (previous?.size ?? 0))
                    return
                } catch {
                    // The directory was deleted under us: recreate it (or say why not) and try once more.
                    if error.code == ENOENT || error.code == ENOTDIR, !retried {
                        retried = true
                        try ensureDirectories()
                        continue
                    }
                    throw .cache(.cannotWriteFile(key: key, path: dataPath, message: error.message))
                }
            }
        }
    }

    func valueNow(forKey key: String, extendingExpiration: ExpirationExtending?) -> Data? {
        let now = config.now().timeIntervalSince1970
        let hash = Self.hash(key)
        return try? withKeyLock(hash) { () throws(OspreyError) -> Data? in
            guard let raw = DiskFileIO.readFile(indexPath(hash)) else { return nil }
            guard let index = DiskEntryIndex(parsing: raw.data), index.key == key else {
                try? removeEntry(hash: hash, fileName: fileName(hash: hash, key: key))
                return nil
            }
            if index.isExpired(at: now) {
                try? removeEntry(hash: hash, fileName: index.fileName)
                return nil
            }
            let dataPath = directory + "/" + index.fileName
            guard let file = DiskFileIO.readFile(dataPath), file.stamp == index.stamp, file.data.count == index.size else {
                // Another instance may be between its two renames (a fresh data file of another
                // inode): a miss, but leave its entry alone while it is young.
                if let info = DiskFileIO.info(dataPath), info.stamp.inode != index.stamp.inode, !info.isDirectory,
                   Date().timeIntervalSince1970 - info.modified < config.recoveryGracePeriod {
                    return nil
                }
                try? removeEntry(hash: hash, fileName: index.fileName)
                return nil
            }
            var updated = index
            updated.lastAccess = now
            if let extended = (extendingExpiration ?? config.extendingExpiration).extended(index.policy) {
                updated.policy = extended
                updated.expires = DiskEntryIndex.expiry(of: extended, from: now)
            }
            // Record the access only when the stored one is stale (or the rule changed): a hit then
            // costs one read instead of a read plus an atomic index rewrite.
            if now - index.lastAccess >= config.accessRecordInterval || updated.policy != index.policy {
                writeIndex(updated, hash: hash)
            }
            return file.data
        }
    }

    /// Rewrites an index file atomically; best effort (a failure only loses the access record).
    func writeIndex(_ index: DiskEntryIndex, hash: String) {
        let temp = tempPath()
        do {
            _ = try DiskFileIO.writeNew(temp, index.encoded())
            try DiskFileIO.renameFile(temp, indexPath(hash))
        } catch {
            try? DiskFileIO.removeFile(temp)
        }
    }

    /// Removes an entry's index, then its data (so that no index is left pointing at nothing).
    func removeEntry(hash: String, fileName: String) throws(OspreyError) {
        let size = DiskFileIO.info(directory + "/" + fileName)?.size ?? 0
        for path in [indexPath(hash), directory + "/" + fileName] {
            do throws(FileIOError) { try DiskFileIO.removeFile(path) } catch {
                throw .cache(.cannotRemoveFile(path: path, message: error.message))
            }
        }
        if size > 0 { account(-size) }
    }

    // MARK: Scanning and cleaning

    struct ScannedEntry {
        var hash: String
        var index: DiskEntryIndex
    }

    struct Scan {
        var valid: [ScannedEntry] = []
        /// Entries whose files are inconsistent: an index file (readable or not) without its exact data
        /// file (`hasIndex`), or a data file no index names.
        var broken: [(hash: String, fileName: String, hasIndex: Bool, index: DiskEntryIndex?, size: Int)] = []
    }

    /// Reads every index file and checks it against its data file; lists data files without an index.
    /// Inconsistencies younger than the grace period (maybe a store in flight elsewhere) are ignored
    /// unless `strict`.
    func scan(strict: Bool = false) -> Scan {
        var result = Scan()
        let wallNow = Date().timeIntervalSince1970
        func young(_ info: DiskFileIO.FileInfo?) -> Bool {
            !strict && info.map { wallNow - $0.modified < config.recoveryGracePeriod } ?? false
        }
        var indexed = Set<String>()
        for hash in DiskFileIO.list(indexDirectory) ?? [] {
            let raw = DiskFileIO.readFile(indexPath(hash))
            guard let raw, let index = DiskEntryIndex(parsing: raw.data) else {
                if !young(DiskFileIO.info(indexPath(hash))) {
                    result.broken.append((hash, hash, true, nil, 0))
                }
                continue
            }
            indexed.insert(index.fileName)
            let info = DiskFileIO.info(directory + "/" + index.fileName)
            if let info, info.stamp == index.stamp, info.size == index.size {
                result.valid.append(ScannedEntry(hash: hash, index: index))
            } else if let info, info.stamp.inode != index.stamp.inode, young(info) {
                continue
            } else {
                result.broken.append((hash, index.fileName, true, index, info?.size ?? 0))
            }
        }
        for name in DiskFileIO.list(directory) ?? [] where !name.hasPrefix(".") && !indexed.contains(name) {
            let info = DiskFileIO.info(directory + "/" + name)
            guard let info, !info.isDirectory, !young(info) else { continue }
            let hash = String(name.prefix { $0 != "." })
            result.broken.append((hash, name, false, nil, info.size))
        }
        return result
    }

    /// One cleaning pass: removes inconsistent entries, then (optionally) expired ones, then
    /// least recently accessed ones while over the size limit. Resets the running total.
    func clean(removeExpired: Bool, recovering: Bool, enforceSize: Bool = true) -> DiskStorage.CleanReport {
        if recovering { removeStaleTemporaryFiles() }
        var report = DiskStorage.CleanReport()
        let scanned = scan()
        let now = config.now().timeIntervalSince1970
        var live: [ScannedEntry] = []
        var expired: [DiskStorage.RemovedEntry] = []
        for entry in scanned.valid {
            if removeExpired, entry.index.isExpired(at: now) {
                if (try? removeEntry(hash: entry.hash, fileName: entry.index.fileName)) != nil {
                    expired.append(.init(key: entry.index.key, fileName: entry.index.fileName, size: entry.index.size, reason: .expired))
                }
            } else {
                live.append(entry)
            }
        }
        report.removed += expired
        for broken in scanned.broken {
            if broken.hasIndex { try? DiskFileIO.removeFile(indexPath(broken.hash)) }
            try? DiskFileIO.removeFile(directory + "/" + broken.fileName)
            report.removed.append(.init(key: broken.index?.key, fileName: broken.fileName, size: broken.size, reason: .corrupt))
        }
        var total = live.reduce(0) { $0 + $1.index.size }
        let limit = config.sizeLimit
        if enforceSize, limit > 0, total > limit {
            let target = Int(Double(limit) * min(max(config.trimRatio, 0), 1))
            live.sort { ($0.index.lastAccess, $0.index.created) < ($1.index.lastAccess, $1.index.created) }
            var kept = 0
            for entry in live {
                if total > target, (try? removeEntry(hash: entry.hash, fileName: entry.index.fileName)) != nil {
                    total -= entry.index.size
                    report.removed.append(.init(key: entry.index.key, fileName: entry.index.fileName, size: entry.index.size, reason: .sizeLimit))
                } else {
                    kept += 1
                }
            }
            report.remainingCount = kept
        } else {
            report.remainingCount = live.count
        }
        report.remainingSize = total
        setEstimatedSize(total)
        return report
    }

    /// Removes temporary files whose writer is gone (its pid no longer exists) or older than an hour.
    func removeStaleTemporaryFiles() {
        let me = getpid()
        let wallNow = Date().timeIntervalSince1970
        for name in DiskFileIO.list(tempDirectory) ?? [] {
            let path = tempDirectory + "/" + name
            let pid = Int32(name.prefix { $0 != "-" })
            let writerGone = pid.map { $0 != me && !DiskFileIO.processExists($0) } ?? true
            let old = DiskFileIO.info(path).map { wallNow - $0.modified > 3_600 } ?? false
            if writerGone || old {
                try? DiskFileIO.removeFile(path)
            }
        }
    }
}
