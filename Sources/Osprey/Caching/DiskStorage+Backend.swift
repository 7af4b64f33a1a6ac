import Crypto
import Foundation
import Synchronization

extension DiskStorage {
    /// A directory of cached byte blobs, one file per entry, with an index in memory; safe against
    /// crashes and shared use.
    ///
    /// ## Layout (format 2)
    /// ```
    /// <cacheDirectory>/<sha256 hex of key>[.ext]   the entry: its bytes, then a trailer (key, sizes,
    ///                                              creation, expiration rule, checksum)
    /// <cacheDirectory>/.tmp/<pid>-<tag>-<n>        files being written
    /// <cacheDirectory>/.osprey-index-v2            the index snapshot (see below)
    /// ```
    /// A file's **mtime** is the entry's expiry in whole seconds with 0 ns (the seal: a file written
    /// to after the store fails it), its **atime** the entry's last access. `DiskEntryFile` has
    /// the byte layout. Data is not fsynced: this protects against the process dying, not against
    /// power loss.
    ///
    /// ## Index
    /// Every entry's size, expiry, last access and key are held in memory (`DiskEntryIndex`),
    /// so a hit is one `open` and one `read` of its file and the size limit and LRU order cost no
    /// disk access. The index is built at open from the directory listing, the index snapshot, and
    /// for files the snapshot does not cover, their trailer (one `pread` of its end, not the whole
    /// file) and times. It follows this instance's stores and
    /// removals, and is re-synchronised with the directory, for the work of other instances:
    /// - on a read: the file is read whatever the index says; one the index did not know (or a
    ///   newer one, another inode) is adopted, a missing one dropped;
    /// - on `isCached(forKey:)`: the file's inode is checked with one `stat`;
    /// - on every clean, trim and `statistics()`: the directory is listed; files the index does
    ///   not know have their trailers read, entries whose file is gone are dropped. Known files are
    ///   not re-read: an entry another instance replaced keeps its old size until read (approximate).
    ///
    /// A hit records its access (and extended expiry) in memory only; the file times are written
    /// (one `utimensat` per entry, nothing rewritten) at most ``DiskStorage/Config/accessRecordInterval``
    /// later, before every clean or trim, and when the storage is deinitialised. LRU order across
    /// restarts and instances is exact to within that interval; an instance that is killed loses
    /// its unwritten access records, never an entry. Expiry has one-second resolution.
    ///
    /// ## Index snapshot
    /// `.osprey-index-v2` holds a copy of the index, trusted per file and never served from:
    /// `DiskIndexSnapshot` says when and why.
    ///
    /// ## Crash safety
    /// A store writes the data and trailer to a temporary file in one `writev`, seals its times, then
    /// renames it into place: a reader sees the whole old entry, the whole new one, or none. A file
    /// that is torn, truncated, foreign or modified in place fails the size, magic,
    /// checksum, key or seal check: a read treats it as a miss and removes it. Opening removes
    /// temporary files whose writing process is gone (or older than an hour) and, after
    /// ``DiskStorage/Config/recoveryGracePeriod``, unsealed foreign files (maybe still being written
    /// by an older Osprey).
    ///
    /// ## Upgrade
    /// A directory of format 1 (a `.index/` directory of sidecar files) is recognised at open: the
    /// sidecars and the old data files are removed (none would pass the checks anyway). Only that
    /// directory is taken for format 1: the snapshot file `.osprey-index-v2` is not.
    ///
    /// ## Size limit
    /// Every store adds to the index's total; when it exceeds ``DiskStorage/Config/sizeLimit`` a
    /// background pass re-synchronises with the directory and removes expired entries, then least
    /// recently accessed ones, until the total is at most `sizeLimit * trimRatio`, from the index.
    ///
    /// ## Concurrency
    /// A read and a store run on the caller's thread: a hit is one `open` and `read` of a file
    /// usually in the page cache, a store one `writev` of a new file and a `rename`, each cheaper
    /// than a hop to a queue and back. Removals and the exclusive work (the open's index build,
    /// cleans, trims, ``removeAll()``, `statistics()`) run on a private concurrent dispatch queue,
    /// the exclusive work alone: it waits for the stores already running, and a store that arrives
    /// while exclusive work is pending is queued behind it rather than blocking its caller's thread
    /// for the length of a trim. Operations on one key are serialised. Two
    /// instances (in one process or several) may share a directory: a store racing another
    /// instance's clean or a store of the same key can lose that entry (a miss), never serve
    /// garbage. If the directory is deleted, the next store recreates it.
    public final class Backend: Sendable {
        /// The configuration the storage was made with.
        public let config: Config
        /// The directory holding the entries (the configuration's directory, else the default one + its name).
        public let directoryURL: URL

        let directory: String
        let tempDirectory: String
        /// Default QoS, not utility: callers await work here (and stores queued behind a clean), and
        /// on Linux utility threads run at a lower priority (a 256 KB store took ~10% longer).
        let queue = DispatchQueue(label: "osprey.disk-storage", attributes: .concurrent)
        /// Which stores run inline and when a barrier may start (see `DiskStoreGate`).
        let gate = Locked(DiskStoreGate())
        /// Wakes a barrier waiting for the inline stores that arrived before it.
        private let barrierWake = DispatchSemaphore(value: 0)
        private let stripes: [NSLock] = (0..<32).map { _ in NSLock() }
        let snapshotLock = NSLock()
        let state: SharedLocked<State>
        private let tempCounter = Atomic<Int>(0)
        private let tempTag = String(UInt32.random(in: 0...UInt32.max), radix: 36)

        struct State {
            var index = DiskEntryIndex()
            var trimScheduled = false
            var flushScheduled = false
            /// When access records were last written (config clock, seconds since 1970).
            var lastFlush: TimeInterval = 0
            /// The index generation the snapshot file holds (-1: none written or adopted whole).
            var snapshotGeneration = -1
            /// Whether a snapshot file may exist (removed before this instance writes file times a
            /// snapshot would not know, see ``DiskStorage/Config/accessRecordInterval`` 0).
            var snapshotOnDisk = true
            var observers: [UUID: AsyncStream<CleanReport>.Continuation] = [:]
        }

        /// Opens (creating it when needed) the cache directory of `config`. Never throws: a directory
        /// that cannot be created makes each store throw instead. The index is built in the
        /// background before any other queued operation of this instance runs (reads meanwhile go
        /// to the files); unless ``DiskStorage/Config/cleansOnOpen`` is `false`, that pass also
        /// removes stale temporary files, corrupt and format-1 files, and enforces the size limit.
        public init(config: Config = Config()) {
            self.config = config
            self.directoryURL = config.cacheDirectory.standardizedFileURL
            self.directory = directoryURL.path
            self.tempDirectory = directory + "/.tmp"
            self.state = SharedLocked(State(lastFlush: config.now().timeIntervalSince1970))
            try? ensureDirectories()
            submitBarrier { [self] in
                publish(openPass(cleaning: config.cleansOnOpen))
            }
        }

        deinit {
            flushAccessRecords()
        }

        // MARK: Public API

        /// Stores `data` under `key`, replacing any previous entry, then (in the background) enforces
        /// the size limit. `expiration` defaults to the config's (7 days); an already-expired one
        /// stores nothing and removes the previous entry. Runs on the caller's thread, unless a clean,
        /// trim or ``removeAll()`` is pending: then it waits for it on the storage's queue.
        /// - Throws: ``OspreyError/CacheReason/cannotWriteFile(key:path:message:)`` (read-only or full
        ///   disk...) or ``OspreyError/CacheReason/cannotCreateDirectory(path:message:)``.
        public func store(_ data: Data, forKey key: String, expiration: StorageExpiration? = nil) async throws(OspreyError) {
            try await store(data, forKey: key, expiration: expiration, meta: Data())
        }

        /// ``store(_:forKey:expiration:)`` with `meta` kept in the entry's trailer (the pipeline keeps
        /// a download's HTTP validators there), read back by ``meta(forKey:)``.
        func store(_ data: Data, forKey key: String, expiration: StorageExpiration?, meta: Data) async throws(OspreyError) {
            if let stored = storeInline(data, forKey: key, expiration: expiration, meta: meta) { return try stored.get() }
            try await perform { () throws(OspreyError) in try self.storeNow(data, forKey: key, expiration: expiration, meta: meta) }
        }

        /// ``store(_:forKey:expiration:meta:)`` with a completion: `done` is called on the caller's
        /// thread, or on the storage's queue when the store had to wait for a pending barrier.
        func store(
            _ data: Data, forKey key: String, expiration: StorageExpiration?, meta: Data,
            done: @escaping @Sendable (Result<Void, OspreyError>) -> Void
        ) {
            if let stored = storeInline(data, forKey: key, expiration: expiration, meta: meta) { return done(stored) }
            queue.async { done(Result { () throws(OspreyError) in try self.storeNow(data, forKey: key, expiration: expiration, meta: meta) }) }
        }

        /// The store on the caller's thread, or `nil` (nothing done) when a barrier is pending.
        private func storeInline(_ data: Data, forKey key: String, expiration: StorageExpiration?, meta: Data) -> Result<Void, OspreyError>? {
            guard gate.withLock({ $0.storeArrives() }) == .runInline else { return nil }
            defer { if gate.withLock({ $0.inlineStoreFinished() }) { barrierWake.signal() } }
            return Result { () throws(OspreyError) in try storeNow(data, forKey: key, expiration: expiration, meta: meta) }
        }

        /// The `meta` stored with `key`'s entry (empty when none was), or `nil` on a miss; reads the
        /// trailer only and records no access.
        func meta(forKey key: String) -> Data? {
            metaNow(forKey: key)
        }

        /// The bytes stored under `key`, or `nil` on a miss. Expired, corrupt or foreign files are
        /// misses and are removed. A hit records the access (for LRU) and extends the expiration
        /// as `extendingExpiration` says (`nil`, the default, uses the config's), in memory first
        /// (see ``DiskStorage/Config/accessRecordInterval``). Runs on the caller's thread.
        public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) async -> Data? {
            valueNow(forKey: key, extendingExpiration: extendingExpiration)
        }

        /// ``value(forKey:extendingExpiration:)`` that, with `servingExpired`, answers with an
        /// expired entry too, left on disk as it is (not removed, not extended): the pipeline's
        /// read while the network is unavailable.
        package func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil, servingExpired: Bool) async -> Data? {
            valueNow(forKey: key, extendingExpiration: extendingExpiration, servingExpired: servingExpired)
        }

        /// ``value(forKey:extendingExpiration:)`` with the entry's `meta` and the time it was stored
        /// (seconds since 1970), for the data stage; `servingExpired` as in
        /// ``value(forKey:extendingExpiration:servingExpired:)``.
        func entry(forKey key: String, servingExpired: Bool = false) -> (data: Data, meta: Data, created: TimeInterval)? {
            entryNow(forKey: key, extendingExpiration: nil, servingExpired: servingExpired).map { ($0.data, $0.file.meta, $0.file.created) }
        }

        /// Whether an unexpired, valid entry exists for `key`: the index plus one `stat` of its file
        /// (its trailer too when the index did not know the file). Synchronous; records no access.
        package func isCached(forKey key: String) -> Bool {
            isCachedNow(forKey: key)
        }

        /// Removes the entry for `key`, if any.
        /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)``.
        public func remove(forKey key: String) async throws(OspreyError) {
            try await perform { () throws(OspreyError) in
                let hash = Self.hash(key)
                try self.withKeyLock(hash) { () throws(OspreyError) in
                    let name = self.state.withLock { $0.index[hash]?.fileName } ?? self.fileName(hash: hash, key: key)
                    try self.removeEntry(hash: hash, fileName: name)
                }
            }
        }

        /// Removes every entry (files being written by others are left alone).
        /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)`` for the first file that could not be removed.
        public func removeAll() async throws(OspreyError) {
            try await perform(barrier: true) { () throws(OspreyError) in try self.removeAllNow() }
        }

        /// Removes expired entries (and corrupt ones); returns what went and publishes it.
        @discardableResult
        package func removeExpired() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: true, enforceSize: false)) }
        }

        /// Removes least recently accessed entries down to `sizeLimit * trimRatio` when the total
        /// exceeds the limit (a no-op for an unlimited storage); returns what went and publishes it.
        @discardableResult
        public func removeSizeExceeded() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: false, enforceSize: true)) }
        }

        /// Removes expired, corrupt and over-limit entries: ``removeExpired()`` then
        /// ``removeSizeExceeded()`` in one pass. Returns what went and publishes it.
        @discardableResult
        package func clean() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: true, enforceSize: true)) }
        }

        /// The summed size of all entries' data, in bytes, from the index re-synchronised with the directory.
        public func totalSize() async -> Int {
            await statistics().totalSize
        }

        /// Entry count, expired count, total size and limit, from the index re-synchronised with the directory.
        package func statistics() async -> Statistics {
            await perform(barrier: true) {
                _ = self.resync(removingCorrupt: false)
                let now = self.config.now().timeIntervalSince1970
                return self.state.withLock { state in
                    var stats = Statistics(
                        directory: self.directory, entryCount: state.index.count, expiredCount: 0,
                        totalSize: state.index.totalSize, sizeLimit: self.config.sizeLimit)
                    for hash in state.index.hashes where state.index[hash]?.isExpired(at: now) == true { stats.expiredCount += 1 }
                    return stats
                }
            }
        }

        /// The size total of the in-memory index (this instance's stores and cleans, and what it has
        /// learnt of other instances'), without touching the disk.
        public var estimatedTotalSize: Int { state.withLock { $0.index.totalSize } }

        /// The file of `key`'s entry (it exists only while the entry does). It starts with the
        /// stored bytes, followed by a trailer (format 2, see ``DiskStorage/Backend``): read entries
        /// with ``value(forKey:extendingExpiration:)``, not from this file.
        public func fileURL(forKey key: String) -> URL {
            directoryURL.appendingPathComponent(fileName(hash: Self.hash(key), key: key), isDirectory: false)
        }

        /// A stream of the reports of every clean that removed something (including the automatic
        /// size-limit passes and the open-time recovery). Each call makes a new stream; it keeps the 64
        /// newest reports when not read. Finish iterating (or cancel) to unsubscribe.
        package func cleanEvents() -> AsyncStream<CleanReport> {
            let (stream, continuation) = AsyncStream.makeStream(of: CleanReport.self, bufferingPolicy: .bufferingNewest(64))
            let id = UUID()
            state.withLock { $0.observers[id] = continuation }
            // Holds the state, not the storage: a weak reference to the storage would give it a
            // side table and slow every retain of it.
            let state = self.state
            continuation.onTermination = { _ in
                _ = state.withLock { $0.observers.removeValue(forKey: id) }
            }
            return stream
        }

        /// Waits until every operation submitted so far (including background size-limit passes and
        /// the open-time index build) has finished.
        public func waitForPendingWork() async {
            await perform(barrier: true) {}
        }

        // MARK: Naming

        /// The lowercase hex SHA-256 of the key's UTF-8 bytes: the entry's file name. Hashes the
        /// string's own bytes: `SHA256.hash(data:)` of a `Data` made from them goes through generic
        /// code and dynamic casts that cost more than the digest (every store and read names a file).
        static func hash(_ key: String) -> String {
            var key = key
            let digest = key.withUTF8 { DiskEntryFile.sha256(UnsafeRawBufferPointer($0)) }
            return digest.withUnsafeBytes { Hex.lowercase($0) }
        }

        /// The hash part of an entry's file name (before any extension), by UTF-8 bytes: iterating
        /// characters would cost a grapheme break per byte, 100,000 names at open.
        static func hashPart(_ name: String) -> String {
            guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) else { return name }
            return String(name[..<dot])
        }

        func fileName(hash: String, key: String) -> String {
            let ext: String?
            switch config.fileExtension {
            case .none: ext = nil
            case .fromKey: ext = DiskStorage.keyExtension(key)
            case .forced(let forced): ext = DiskStorage.sanitizedExtension(forced)
            }
            return ext.map { "\(hash).\($0)" } ?? hash
        }

        func tempPath() -> String {
            tempDirectory + "/\(getpid())-\(tempTag)-\(tempCounter.add(1, ordering: .relaxed).newValue)"
        }

        // MARK: Plumbing

        func ensureDirectories() throws(OspreyError) {
            for path in [directory, tempDirectory] {
                do throws(FileIOError) { try DiskFileIO.makeDirectories(path) } catch {
                    throw .cache(.cannotCreateDirectory(path: path, message: error.message))
                }
            }
        }

        func withKeyLock<T>(_ hash: String, _ body: () throws(OspreyError) -> T) throws(OspreyError) -> T {
            let lock = stripes[(Int(hash.utf8.first ?? 0) &+ Int(hash.utf8.last ?? 0)) & 31]
            lock.lock()
            defer { lock.unlock() }
            return try body()
        }

        /// `body` on the storage's queue, awaited. A barrier runs alone: after the work queued before
        /// it and the inline stores that arrived before it, before any store that arrives after.
        private func perform<T: Sendable, Failure: Error>(
            barrier: Bool = false, _ body: @escaping @Sendable () throws(Failure) -> T
        ) async throws(Failure) -> T {
            guard barrier else { return try await queue.run(body) }
            gate.withLock { $0.barrierSubmitted() }
            return try await queue.run(flags: .barrier) { () throws(Failure) -> T in try self.runBarrier(body) }
        }

        /// Barrier work that nobody awaits (the open pass, background size passes).
        func submitBarrier(_ body: @escaping @Sendable () -> Void) {
            gate.withLock { $0.barrierSubmitted() }
            queue.async(flags: .barrier) { [self] in runBarrier(body) }
        }

        /// Runs a submitted barrier's `body` once the inline stores it must follow have finished.
        private func runBarrier<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
            // On the queue's thread, never the cooperative pool's; the stores waited for are running.
            if gate.withLock({ $0.barrierStarts() }) == .waitForInlineStores {
                barrierWake.wait()
                gate.withLock { $0.barrierResumed() }
            }
            defer { gate.withLock { $0.barrierFinished() } }
            return try body()
        }

        /// Schedules a size pass when the index's total is over the limit (and none is pending).
        func checkSizeLimit() {
            let limit = config.sizeLimit
            let schedule = state.withLock { state -> Bool in
                guard limit > 0, state.index.totalSize > limit, !state.trimScheduled else { return false }
                state.trimScheduled = true
                return true
            }
            guard schedule else { return }
            submitBarrier { [self] in
                let report = clean(removeExpired: true, enforceSize: true)
                state.withLock { $0.trimScheduled = false }
                publish(report)
            }
        }

        @discardableResult
        func publish(_ report: CleanReport) -> CleanReport {
            guard !report.removed.isEmpty else { return report }
            for continuation in state.withLock({ Array($0.observers.values) }) {
                continuation.yield(report)
            }
            return report
        }
    }
}
