import Crypto
import Foundation
import Synchronization

extension DiskStorage {
    /// A directory of cached byte blobs, one file per entry, safe against crashes and shared use.
    ///
    /// ## Layout
    /// ```
    /// <cacheDirectory>/<sha256 hex of key>[.ext]   the entry's bytes, exactly as stored
    /// <cacheDirectory>/.index/<sha256 hex of key>  its index file (see below)
    /// <cacheDirectory>/.tmp/<pid>-<uuid>           files being written
    /// ```
    /// Linux cannot set a file's creation date, so expiry and last access live in a small
    /// per-entry index file ("sidecar"), not in file timestamps. The sidecar is text: the data file
    /// name, its size, **inode and modification time**, creation, last access and expiry times, the entry's own
    /// expiration (for extension on access) and the key.
    ///
    /// ## Crash safety
    /// A store writes the data and its sidecar to temporary files, then renames the data into place,
    /// then the sidecar. Renames are atomic, so a reader never sees a torn file. The sidecar names the
    /// inode, modification time and size of the data file it was written for; a data file with no
    /// sidecar, or whose stamp or size differs from its sidecar's (the state after a SIGKILL between the two renames, or after
    /// in-place damage), is never served: a read treats it as a miss and removes it. At open, a
    /// background recovery pass removes temporary files whose writing process is gone (or older than
    /// an hour), sidecars whose data file is missing, and inconsistent entries older than
    /// ``DiskStorage/Config/recoveryGracePeriod``. Data is not fsynced: this protects against the
    /// process dying, not against power loss.
    ///
    /// ## Size limit
    /// Every store adds to a running total; when it exceeds ``DiskStorage/Config/sizeLimit`` a
    /// background pass rescans the directory (so writes of other instances count too) and removes
    /// least recently accessed entries until the total is at most `sizeLimit * trimRatio`.
    ///
    /// ## Concurrency
    /// All file work runs on a private concurrent dispatch queue, never on the caller's thread or on
    /// Swift's cooperative pool; the async methods suspend until it is done. Operations on one key are
    /// serialised; cleans run exclusively. Two instances (in one process or several) may share a
    /// directory: a store racing another instance's clean or a store of the same key can lose that
    /// entry (a miss), never serve garbage. If the directory is deleted, the next store recreates it.
    public final class Backend: Sendable {
        /// The configuration the storage was made with.
        public let config: Config
        /// The directory holding the entries (``DiskStorage/Config/cacheDirectory``).
        public let directoryURL: URL

        let directory: String
        let indexDirectory: String
        let tempDirectory: String
        private let queue = DispatchQueue(label: "osprey.disk-storage", qos: .utility, attributes: .concurrent)
        private let stripes: [NSLock] = (0..<32).map { _ in NSLock() }
        private let state = Locked(State())

        struct State {
            var estimatedSize = 0
            var trimScheduled = false
            var observers: [UUID: AsyncStream<CleanReport>.Continuation] = [:]
        }

        /// Opens (creating it when needed) the cache directory of `config`. Never throws: a directory
        /// that cannot be created makes each store throw instead. Unless ``DiskStorage/Config/cleansOnOpen``
        /// is `false`, a recovery pass (temporary files, inconsistent entries, size limit) runs in the
        /// background before any other operation of this instance.
        public init(config: Config = Config()) {
            self.config = config
            self.directoryURL = config.cacheDirectory.standardizedFileURL
            self.directory = directoryURL.path
            self.indexDirectory = directory + "/.index"
            self.tempDirectory = directory + "/.tmp"
            try? ensureDirectories()
            guard config.cleansOnOpen else {
                // Still learn the current total, read-only, so that the size limit holds.
                queue.async(flags: .barrier) { [self] in setEstimatedSize(scan().valid.reduce(0) { $0 + $1.index.size }) }
                return
            }
            queue.async(flags: .barrier) { [self] in
                let report = clean(removeExpired: false, recovering: true)
                publish(report)
            }
        }

        // MARK: Public API

        /// Stores `data` under `key`, replacing any previous entry, then (in the background) enforces
        /// the size limit. `expiration` defaults to the config's (7 days); an already-expired one
        /// stores nothing and removes the previous entry.
        /// - Throws: ``OspreyError/CacheReason/cannotWriteFile(key:path:message:)`` (read-only or full
        ///   disk...) or ``OspreyError/CacheReason/cannotCreateDirectory(path:message:)``.
        public func store(_ data: Data, forKey key: String, expiration: StorageExpiration? = nil) async throws(OspreyError) {
            try await perform { () throws(OspreyError) in try self.storeNow(data, forKey: key, expiration: expiration) }
        }

        /// The bytes stored under `key`, or `nil` on a miss. Expired, inconsistent or unreadable entries
        /// are misses and are removed. A hit records the access (for LRU) and extends the expiration
        /// as `extendingExpiration` says (`nil`, the default, uses the config's).
        public func value(forKey key: String, extendingExpiration: ExpirationExtending? = nil) async -> Data? {
            await perform { self.valueNow(forKey: key, extendingExpiration: extendingExpiration) }
        }

        /// Whether an unexpired, consistent entry exists for `key`. Reads only its index file and
        /// examines its data file, synchronously; records no access.
        public func isCached(forKey key: String) -> Bool {
            let now = config.now().timeIntervalSince1970
            let hash = Self.hash(key)
            guard let raw = DiskFileIO.readFile(indexPath(hash)),
                  let index = DiskEntryIndex(parsing: raw.data), index.key == key, !index.isExpired(at: now),
                  let info = DiskFileIO.info(directory + "/" + index.fileName)
            else { return false }
            return info.stamp == index.stamp && info.size == index.size
        }

        /// Removes the entry for `key`, if any.
        /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)``.
        public func remove(forKey key: String) async throws(OspreyError) {
            try await perform { () throws(OspreyError) in
                let hash = Self.hash(key)
                try self.withKeyLock(hash) { () throws(OspreyError) in try self.removeEntry(hash: hash, fileName: self.fileName(hash: hash, key: key)) }
            }
        }

        /// Removes every entry (files being written by others are left alone).
        /// - Throws: ``OspreyError/CacheReason/cannotRemoveFile(path:message:)`` for the first file that could not be removed.
        public func removeAll() async throws(OspreyError) {
            try await perform(barrier: true) { () throws(OspreyError) in
                var firstError: OspreyError?
                for name in DiskFileIO.list(self.indexDirectory) ?? [] {
                    do throws(FileIOError) { try DiskFileIO.removeFile(self.indexPath(name)) } catch { firstError = firstError ?? .cache(.cannotRemoveFile(path: self.indexPath(name), message: error.message)) }
                }
                for name in DiskFileIO.list(self.directory) ?? [] where !name.hasPrefix(".") {
                    let path = self.directory + "/" + name
                    do throws(FileIOError) { try DiskFileIO.removeFile(path) } catch { firstError = firstError ?? .cache(.cannotRemoveFile(path: path, message: error.message)) }
                }
                self.state.withLock { $0.estimatedSize = 0 }
                if let firstError { throw firstError }
            }
        }

        /// Removes expired entries (and inconsistent ones); returns what went and publishes it.
        @discardableResult
        public func removeExpired() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: true, recovering: false, enforceSize: false)) }
        }

        /// Removes least recently accessed entries down to `sizeLimit * trimRatio` when the total
        /// exceeds the limit (a no-op for an unlimited storage); returns what went and publishes it.
        @discardableResult
        public func removeSizeExceeded() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: false, recovering: false)) }
        }

        /// Removes expired, inconsistent and over-limit entries: ``removeExpired()`` then
        /// ``removeSizeExceeded()`` in one pass. Returns what went and publishes it.
        @discardableResult
        public func clean() async -> CleanReport {
            await perform(barrier: true) { self.publish(self.clean(removeExpired: true, recovering: false)) }
        }

        /// The summed size of all entries' data files, in bytes, from a scan of the directory.
        public func totalSize() async -> Int {
            await statistics().totalSize
        }

        /// Entry count, expired count, total size and limit, from a scan of the directory.
        public func statistics() async -> Statistics {
            await perform {
                let now = self.config.now().timeIntervalSince1970
                var stats = Statistics(directory: self.directory, entryCount: 0, expiredCount: 0, totalSize: 0, sizeLimit: self.config.sizeLimit)
                for entry in self.scan().valid {
                    stats.entryCount += 1
                    stats.totalSize += entry.index.size
                    if entry.index.isExpired(at: now) { stats.expiredCount += 1 }
                }
                return stats
            }
        }

        /// The size total kept up to date by this instance's stores and cleans, without touching the disk.
        public var estimatedTotalSize: Int { state.withLock { $0.estimatedSize } }

        /// Where the bytes of `key` are (or would be) stored. The file exists only while the entry does.
        public func fileURL(forKey key: String) -> URL {
            directoryURL.appendingPathComponent(fileName(hash: Self.hash(key), key: key), isDirectory: false)
        }

        /// A stream of the reports of every clean that removed something (including the automatic
        /// size-limit passes and the open-time recovery). Each call makes a new stream; it keeps the 64
        /// newest reports when not read. Finish iterating (or cancel) to unsubscribe.
        public func cleanEvents() -> AsyncStream<CleanReport> {
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
        /// the open-time recovery) has finished.
        public func waitForPendingWork() async {
            await perform(barrier: true) {}
        }

        // MARK: Naming

        /// The lowercase hex SHA-256 of the key's UTF-8 bytes: the entry's file name.
        static func hash(_ key: String) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var hex: [UInt8] = []
            hex.reserveCapacity(64)
            for byte in SHA256.hash(data: Data(key.utf8)) {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: hex, as: UTF8.self)
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

        func indexPath(_ hash: String) -> String { indexDirectory + "/" + hash }

        func tempPath() -> String { tempDirectory + "/\(getpid())-\(UUID().uuidString)" }

        // MARK: Plumbing

        func ensureDirectories() throws(OspreyError) {
            for path in [directory, indexDirectory, tempDirectory] {
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

        private func perform<T: Sendable>(barrier: Bool = false, _ body: @escaping @Sendable () throws(OspreyError) -> T) async throws(OspreyError) -> T {
            let result: Result<T, OspreyError> = await withCheckedContinuation { continuation in
                queue.async(flags: barrier ? .barrier : []) {
                    continuation.resume(returning: Result { () throws(OspreyError) -> T in try body() })
                }
            }
            return try result.get()
        }

        private func perform<T: Sendable>(barrier: Bool = false, _ body: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in
                queue.async(flags: barrier ? .barrier : []) { continuation.resume(returning: body()) }
            }
        }

        /// Adds `delta` to the running total and schedules a size pass when it goes over the limit.
        func account(_ delta: Int) {
            let limit = config.sizeLimit
            let schedule = state.withLock { state -> Bool in
                state.estimatedSize = max(0, state.estimatedSize + delta)
                guard limit > 0, state.estimatedSize > limit, !state.trimScheduled else { return false }
                state.trimScheduled = true
                return true
            }
            guard schedule else { return }
            queue.async(flags: .barrier) { [self] in
                let report = clean(removeExpired: false, recovering: false)
                state.withLock { $0.trimScheduled = false }
                publish(report)
            }
        }

        func setEstimatedSize(_ size: Int) {
            state.withLock { $0.estimatedSize = size }
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
