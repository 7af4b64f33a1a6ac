import Foundation

/// The synchronous file work of ``DiskStorage/Backend``: stores and removals on its queue, reads
/// on the caller's thread.
extension DiskStorage.Backend {
    typealias Entry = DiskEntryIndex.Entry

    func storeNow(_ data: Data, forKey key: String, expiration: StorageExpiration?, meta: Data = Data()) throws(OspreyError) {
        let now = config.now().timeIntervalSince1970
        let policy = expiration ?? config.expiration
        let expiry = DiskEntryFile.expiry(of: policy, from: now)
        let hash = Self.hash(key)
        let name = fileName(hash: hash, key: key)
        try withKeyLock(hash) { () throws(OspreyError) in
            if let expiry, expiry <= now {
                try removeEntry(hash: hash, fileName: state.withLock { $0.index[hash]?.fileName } ?? name)
                return
            }
            let dataPath = directory + "/" + name
            let seal = DiskEntryFile.sealSeconds(expiry: expiry)
            let trailer = DiskEntryFile(key: key, dataSize: data.count, created: now, policy: policy, meta: meta).trailer()
            var retried = false
            while true {
                let temp = tempPath()
                do throws(FileIOError) {
                    let inode = try DiskFileIO.writeAtomically(
                        dataPath, through: temp, data, trailer: trailer, accessed: now, mtimeSeconds: seal)
                    let entry = Entry(
                        fileName: name, inode: inode, key: key, size: data.count, created: now, policy: policy,
                        expires: DiskEntryFile.expiry(sealSeconds: seal), lastAccess: now)
                    let previous = state.withLock { $0.index.insert(entry, hash: hash) }
                    if let previous, previous.fileName != name {
                        try? DiskFileIO.removeFile(directory + "/" + previous.fileName)
                    }
                    checkSizeLimit()
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

    func valueNow(forKey key: String, extendingExpiration: ExpirationExtending?, servingExpired: Bool = false) -> Data? {
        entryNow(forKey: key, extendingExpiration: extendingExpiration, servingExpired: servingExpired)?.data
    }

    /// ``valueNow(forKey:extendingExpiration:servingExpired:)`` with the entry's trailer (its `meta`
    /// and the time it was stored). With `servingExpired`, an expired entry is answered too, and
    /// left as it is (not removed, its expiration not extended, no access recorded): what the
    /// pipeline reads while the network is unavailable.
    func entryNow(
        forKey key: String, extendingExpiration: ExpirationExtending?, servingExpired: Bool = false
    ) -> (data: Data, file: DiskEntryFile)? {
        let hash = Self.hash(key)
        let known = state.withLock { $0.index[hash] }
        let name = known?.fileName ?? fileName(hash: hash, key: key)
        let path = directory + "/" + name
        let contents: DiskFileIO.Contents
        switch DiskFileIO.readWhole(path) {
        case .success(let read):
            contents = read
        case .failure(.missing):
            if known != nil { state.withLock { _ = $0.index.remove(hash) } }
            return nil
        case .failure(.unreadable(let info)):
            discardFile(hash: hash, path: path, info: info)
            return nil
        }
        let info = contents.info
        var needed = 0
        // The checksum was verified when this instance wrote or adopted this inode (not for a record
        // of the snapshot); the seal (checked by the read) says it was not written to since.
        let parsed = DiskEntryFile.parse(
            tail: UnsafeRawBufferPointer(start: contents.bytes, count: info.size), fileSize: info.size,
            needed: &needed, verifyingChecksum: known?.inode != info.inode || known?.verified != true)
        guard let file = parsed, file.key == key else {
            contents.discard()
            discardFile(hash: hash, path: path, info: info)
            return nil
        }
        let now = config.now().timeIntervalSince1970
        // The file's expiry, or this instance's newer one not yet written to it.
        var entry = Entry(fileName: name, file: file, info: info)
        if let known, known.inode == info.inode {
            entry.expires = Self.later(known.expires, entry.expires)
            entry.policy = known.policy
        }
        if entry.isExpired(at: now) {
            if servingExpired { return (contents.data(count: file.dataSize), file) }
            contents.discard()
            discardFile(hash: hash, path: path, info: info)
            return nil
        }
        var extendedExpiry: TimeInterval??
        var extendedPolicy: StorageExpiration?
        if let policy = (extendingExpiration ?? config.extendingExpiration).extended(entry.policy) {
            extendedPolicy = policy
            extendedExpiry = .some(DiskEntryFile.expiry(sealSeconds: DiskEntryFile.sealSeconds(expiry: DiskEntryFile.expiry(of: policy, from: now))))
        }
        recordAccess(hash: hash, entry: entry, path: path, at: now, extendedTo: extendedExpiry, policy: extendedPolicy)
        return (contents.data(count: file.dataSize), file)
    }

    func isCachedNow(forKey key: String) -> Bool {
        let now = config.now().timeIntervalSince1970
        let hash = Self.hash(key)
        let known = state.withLock { $0.index[hash] }
        let name = known?.fileName ?? fileName(hash: hash, key: key)
        if let known, known.key == key, let info = DiskFileIO.info(directory + "/" + name), info.inode == known.inode, info.isSealed {
            let expires = Self.later(known.expires, DiskEntryFile.expiry(sealSeconds: info.mtimeSeconds))
            return expires.map { $0 > now } ?? true
        }
        return unexpiredTrailer(forKey: key, name: name, known: known, at: now) != nil
    }

    /// The `meta` of `key`'s unexpired entry, read from its trailer alone (the data is not read);
    /// `nil` on a miss. Records no access.
    func metaNow(forKey key: String) -> Data? {
        let hash = Self.hash(key)
        let known = state.withLock { $0.index[hash] }
        let name = known?.fileName ?? fileName(hash: hash, key: key)
        return unexpiredTrailer(forKey: key, name: name, known: known, at: config.now().timeIntervalSince1970)?.meta
    }

    /// The trailer of `key`'s file `name` when it is a valid entry for `key` that has not expired:
    /// by the file's sealed expiry or, for the file `known` describes, this instance's newer one
    /// not yet written to it (the rule ``valueNow(forKey:extendingExpiration:)`` serves by).
    private func unexpiredTrailer(forKey key: String, name: String, known: Entry?, at now: TimeInterval) -> DiskEntryFile? {
        let dirfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirfd >= 0 else { return nil }
        defer { close(dirfd) }
        guard let (file, info) = DiskFileIO.readTrailer(dirfd, name), file.key == key else { return nil }
        var entry = Entry(fileName: name, file: file, info: info)
        if let known, known.inode == info.inode { entry.expires = Self.later(known.expires, entry.expires) }
        return entry.isExpired(at: now) ? nil : file
    }

    /// Updates the index after a hit; writes the access record now when the interval is 0, else
    /// schedules the batch write once the interval has passed.
    private func recordAccess(
        hash: String, entry: Entry, path: String, at now: TimeInterval,
        extendedTo expires: TimeInterval??, policy: StorageExpiration?
    ) {
        let interval = config.accessRecordInterval
        var adopted = false
        let (updated, flush) = state.withLock { state -> (Entry?, Bool) in
            var updated = state.index.touch(hash, inode: entry.inode, at: now, extendedTo: expires, policy: policy)
            if updated == nil {
                adopted = true
                // A file the index did not know (another instance wrote it): adopt it.
                var new = entry
                new.lastAccess = now
                if let expires { new.expires = expires }
                if let policy { new.policy = policy }
                new.dirty = true
                state.index.insert(new, hash: hash)
                updated = new
            }
            guard interval > 0, !state.flushScheduled, now - state.lastFlush >= interval else { return (updated, false) }
            state.flushScheduled = true
            return (updated, true)
        }
        if interval <= 0, let updated {
            state.withLock { $0.index.markClean(hash, inode: updated.inode) }
            DiskFileIO.setTimes(path, accessed: updated.lastAccess, mtimeSeconds: DiskEntryFile.sealSeconds(expiry: updated.expires))
            // The file's times are now newer than the snapshot's record: an open must read them instead.
            if state.withLock({ state in
                defer { state.snapshotOnDisk = false }
                return state.snapshotOnDisk
            }) {
                unlink(directory + "/" + DiskIndexSnapshot.fileName)
            }
        } else if flush {
            queue.async { [self] in flushAccessRecords() }
        }
        if adopted { checkSizeLimit() }
    }

    /// Writes the in-memory access records (and extended expiries) to the files' times, then (when
    /// `snapshot`) the index snapshot if it changed.
    func flushAccessRecords(snapshot: Bool = true) {
        let now = config.now().timeIntervalSince1970
        let dirty = state.withLock { state -> [Entry] in
            state.flushScheduled = false
            state.lastFlush = now
            return state.index.takeDirty()
        }
        for entry in dirty {
            let path = directory + "/" + entry.fileName
            // Only the file the record is for (another instance may have replaced it).
            guard DiskFileIO.info(path)?.inode == entry.inode else { continue }
            DiskFileIO.setTimes(path, accessed: entry.lastAccess, mtimeSeconds: DiskEntryFile.sealSeconds(expiry: entry.expires))
        }
        if snapshot { writeSnapshotIfStale() }
    }

    /// Removes a file that is not (or no longer) a valid entry (corrupt, foreign or expired), when it
    /// is still the one examined.
    func discardFile(hash: String, path: String, info: DiskFileIO.FileInfo?) {
        // Whatever the index held for this name is no longer what the name holds.
        state.withLock { _ = $0.index.remove(hash) }
        if let info, !info.isDirectory, DiskFileIO.info(path)?.inode == info.inode {
            try? DiskFileIO.removeFile(path)
        }
    }

    /// Removes an entry's file and its index record.
    func removeEntry(hash: String, fileName: String) throws(OspreyError) {
        let path = directory + "/" + fileName
        do throws(FileIOError) { try DiskFileIO.removeFile(path) } catch {
            throw .cache(.cannotRemoveFile(path: path, message: error.message))
        }
        state.withLock { _ = $0.index.remove(hash) }
    }

    /// The later of two expiries (`nil` = never is the latest).
    static func later(_ a: TimeInterval?, _ b: TimeInterval?) -> TimeInterval? {
        guard let a, let b else { return nil }
        return max(a, b)
    }
}
