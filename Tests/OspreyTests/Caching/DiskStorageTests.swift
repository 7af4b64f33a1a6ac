import Foundation
import Testing

@testable import Osprey

@Suite("DiskStorage", .timeLimit(.minutes(5)))
struct DiskStorageTests {
    func makeStorage(
        _ dir: borrowing TemporaryDirectory, clock: TestClock = TestClock(), sizeLimit: Int = 0,
        expiration: StorageExpiration = .days(7), extending: ExpirationExtending = .cacheTime,
        fileExtension: DiskStorage.FileExtension = .none, grace: TimeInterval = 60,
        accessRecordInterval: TimeInterval = 0
    ) async -> DiskStorage.Backend {
        // These tests step the clock by seconds and check exact LRU order, so by default every
        // read is recorded (`accessRecordInterval: 0`); the lazy default has its own test.
        let storage = DiskStorage.Backend(
            config: .init(
                directory: dir.url.appendingPathComponent("c"), sizeLimit: sizeLimit,
                expiration: expiration, extendingExpiration: extending,
                fileExtension: fileExtension, recoveryGracePeriod: grace,
                accessRecordInterval: accessRecordInterval, now: clock.function))
        await storage.waitForPendingWork()
        return storage
    }

    func files(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test func defaults() {
        let config = DiskStorage.Config()
        #expect(config.sizeLimit == 1 << 30)
        #expect(config.trimRatio == 0.8)
        #expect(config.expiration == .days(7))
        #expect(config.extendingExpiration == .cacheTime)
        #expect(DiskStorage.defaultBaseDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"]).path == "/x/cache/osprey")
        #expect(DiskStorage.defaultBaseDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"]).path == "/home/u/.cache/osprey")
        #expect(DiskStorage.defaultBaseDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.cache/osprey")
        #expect(DiskStorage.Config(name: "thumbs").cacheDirectory.lastPathComponent == "thumbs")
    }

    @Test func storesReadsAndRemoves() async throws {
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir)
        let data = entryBytes("a", size: 1_000)
        try await storage.store(data, forKey: "a")
        try await storage.store(entryBytes("b", size: 500), forKey: "b")
        #expect(await storage.value(forKey: "a") == data)
        #expect(await storage.value(forKey: "missing") == nil)
        #expect(storage.isCached(forKey: "a") && !storage.isCached(forKey: "missing"))
        // The file for a key starts with the stored bytes (a trailer follows), named by the key's SHA-256.
        let url = storage.fileURL(forKey: "a")
        let file = try Data(contentsOf: url)
        #expect(file.prefix(data.count) == data)
        #expect(file.count == data.count + DiskEntryFile(key: "a", dataSize: data.count, created: 0, policy: .never).trailerSize)
        #expect(url.lastPathComponent == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb")
        #expect(await storage.totalSize() == 1_500)
        #expect(storage.estimatedTotalSize == 1_500)
        try await storage.remove(forKey: "a")
        #expect(await storage.value(forKey: "a") == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        try await storage.removeAll()
        #expect(await storage.statistics().entryCount == 0)
        #expect(files(in: storage.directory).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func pathExtensions() async throws {
        let dir = TemporaryDirectory()
        let fromKey = await makeStorage(dir, fileExtension: .fromKey)
        let hash = DiskStorage.Backend.hash("https://x.org/a/photo.JPG?size=2")
        #expect(fromKey.fileURL(forKey: "https://x.org/a/photo.JPG?size=2").lastPathComponent == hash + ".jpg")
        #expect(fromKey.fileURL(forKey: "noext").lastPathComponent == DiskStorage.Backend.hash("noext"))
        #expect(fromKey.fileURL(forKey: "a.tar-gz!").pathExtension == "targz")
        #expect(fromKey.fileURL(forKey: "a." + String(repeating: "x", count: 21)).pathExtension == "")
        try await fromKey.store(Data([1, 2, 3]), forKey: "pic.png")
        #expect(await fromKey.value(forKey: "pic.png") == Data([1, 2, 3]))
        #expect(FileManager.default.fileExists(atPath: fromKey.fileURL(forKey: "pic.png").path))
        let forced = DiskStorage.Backend(config: .init(directory: dir.url.appendingPathComponent("f"), fileExtension: .forced(".WebP")))
        #expect(forced.fileURL(forKey: "k.png").pathExtension == "webp")
    }

    @Test func expiresByTheInjectedClock() async throws {
        let clock = TestClock()
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir, clock: clock, extending: .none)
        let events = storage.cleanEvents()
        try await storage.store(Data([1]), forKey: "default")
        try await storage.store(Data([2]), forKey: "short", expiration: .seconds(60))
        try await storage.store(Data([3]), forKey: "never", expiration: .never)
        try await storage.store(Data([4]), forKey: "gone", expiration: .expired)
        #expect(!storage.isCached(forKey: "gone"))
        clock.advance(by: 61)
        #expect(!storage.isCached(forKey: "short"))
        #expect(storage.isCached(forKey: "default"))
        clock.advance(by: 7 * 86_400)
        #expect(await storage.statistics().expiredCount == 2)
        let report = await storage.removeExpired()
        #expect(Set(report.removed.map(\.key)) == ["default", "short"])
        #expect(report.removed.allSatisfy { $0.reason == .expired })
        #expect(report.remainingCount == 1)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == report)
        #expect(await storage.value(forKey: "never") == Data([3]))
    }

    @Test func readsExtendExpiration() async throws {
        let clock = TestClock()
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir, clock: clock, expiration: .seconds(100))
        try await storage.store(Data([1]), forKey: "extended")
        try await storage.store(Data([2]), forKey: "fixed")
        try await storage.store(Data([3]), forKey: "replaced")
        clock.advance(by: 90)
        #expect(await storage.value(forKey: "extended") == Data([1]))
        #expect(await storage.value(forKey: "fixed", extendingExpiration: ExpirationExtending.none) == Data([2]))
        #expect(await storage.value(forKey: "replaced", extendingExpiration: .expirationTime(.days(1))) == Data([3]))
        clock.advance(by: 90)
        #expect(await storage.value(forKey: "extended") == Data([1]))
        #expect(await storage.value(forKey: "fixed") == nil)
        clock.advance(by: 1_000)
        #expect(await storage.value(forKey: "extended") == nil)
        #expect(await storage.value(forKey: "replaced") == Data([3]))
        // Reopening keeps the extended expiration: it lives in the index, not in memory.
        let reopened = await makeStorage(dir, clock: clock)
        #expect(reopened.isCached(forKey: "replaced"))
    }

    @Test func readsRecordAccessLazily() async throws {
        let clock = TestClock()
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir, clock: clock, accessRecordInterval: 60)
        try await storage.store(Data([1, 2, 3]), forKey: "lazy")
        let path = storage.fileURL(forKey: "lazy").path
        func accessed() throws -> TimeInterval {
            var info = stat()
            try #require(stat(path, &info) == 0)
            return TimeInterval(info.st_atim.tv_sec)
        }
        let inode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
        #expect(try accessed() == clock.now.timeIntervalSince1970)
        clock.advance(by: 30)
        #expect(await storage.value(forKey: "lazy") == Data([1, 2, 3]))
        await storage.waitForPendingWork()
        #expect(try accessed() == clock.now.timeIntervalSince1970 - 30, "a read within the interval writes nothing")
        clock.advance(by: 31)
        #expect(await storage.value(forKey: "lazy") == Data([1, 2, 3]))
        await storage.waitForPendingWork()
        #expect(try accessed() == clock.now.timeIntervalSince1970, "a read after the interval has the records written (file times)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int == inode, "nothing is rewritten")
    }

    @Test func sizeLimitHoldsAfterManyWrites() async throws {
        let clock = TestClock()
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir, clock: clock, sizeLimit: 20_000)
        let events = storage.cleanEvents()
        for i in 0..<200 {
            clock.advance(by: 1)
            try await storage.store(entryBytes("e\(i)", size: 1_000), forKey: "e\(i)")
            if i == 5 { _ = await storage.value(forKey: "e0") }  // e0 recently used early on...
            if i >= 10 { _ = await storage.value(forKey: "e0") }  // ...and kept in use
        }
        await storage.waitForPendingWork()
        let stats = await storage.statistics()
        #expect(stats.totalSize <= 20_000)
        #expect(stats.totalSize == stats.entryCount * 1_000)
        #expect(storage.isCached(forKey: "e199"))
        #expect(storage.isCached(forKey: "e0"))
        #expect(!storage.isCached(forKey: "e1"))
        var iterator = events.makeAsyncIterator()
        let report = await iterator.next()
        #expect(report?.removed.first?.reason == .sizeLimit)
        #expect(report.map { $0.remainingSize <= 16_000 } == true)
        // A bigger cache reopened with a smaller limit is brought under it by the open-time pass.
        let smaller = DiskStorage.Backend(config: .init(directory: storage.directoryURL, sizeLimit: 5_000, now: clock.function))
        await smaller.waitForPendingWork()
        #expect(await smaller.totalSize() <= 4_000)
        #expect(smaller.isCached(forKey: "e0") && smaller.isCached(forKey: "e199"))
    }

    @Test func corruptEntriesAreMissesAndRemoved() async throws {
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir)
        try await storage.store(entryBytes("a", size: 4_000), forKey: "a")
        try await storage.store(entryBytes("b", size: 4_000), forKey: "b")
        try await storage.store(entryBytes("c", size: 4_000), forKey: "c")
        // Damaged in place (truncated and overwritten).
        let aURL = storage.fileURL(forKey: "a")
        try Data("garbage".utf8).write(to: aURL)
        #expect(!storage.isCached(forKey: "a"))
        #expect(await storage.value(forKey: "a") == nil)
        #expect(!FileManager.default.fileExists(atPath: aURL.path))
        // A truncated file (its trailer cut off).
        let bURL = storage.fileURL(forKey: "b")
        let handle = try FileHandle(forWritingTo: bURL)
        try handle.truncate(atOffset: 3_000)
        try handle.close()
        #expect(await storage.value(forKey: "b") == nil)
        #expect(!FileManager.default.fileExists(atPath: bURL.path))
        // An unreadable data file (a directory in its place).
        try FileManager.default.removeItem(at: storage.fileURL(forKey: "c"))
        try FileManager.default.createDirectory(at: storage.fileURL(forKey: "c"), withIntermediateDirectories: false)
        #expect(await storage.value(forKey: "c") == nil)
        #expect(!storage.isCached(forKey: "c"))
        #expect(await storage.statistics().entryCount == 0)
    }

    @Test func recoversWhenTheDirectoryIsDeleted() async throws {
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir)
        try await storage.store(Data([1]), forKey: "before")
        try FileManager.default.removeItem(at: storage.directoryURL)
        #expect(await storage.value(forKey: "before") == nil)
        try await storage.store(Data([2]), forKey: "after")
        #expect(await storage.value(forKey: "after") == Data([2]))
        #expect(await storage.statistics().entryCount == 1)
    }

    @Test func unwritableDirectoryThrowsATypedError() async throws {
        let dir = TemporaryDirectory()
        // A regular file where the cache directory's parent should be: fails even for root.
        let blocker = dir.url.appendingPathComponent("file")
        try Data([0]).write(to: blocker)
        let blocked = DiskStorage.Backend(config: .init(directory: blocker.appendingPathComponent("cache")))
        await #expect(throws: OspreyError.self) { try await blocked.store(Data([1]), forKey: "k") }
        do {
            try await blocked.store(Data([1]), forKey: "k")
        } catch {
            guard case .cache(.cannotCreateDirectory(let path, _)) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(path.hasPrefix(blocker.path))
        }
        #expect(await blocked.value(forKey: "k") == nil)
    }

    @Test(.enabled(if: getuid() != 0, "root ignores permissions"))
    func readOnlyDirectoryThrowsATypedError() async throws {
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir)
        try await storage.store(Data([1]), forKey: "kept")
        for path in [storage.directory, storage.tempDirectory] {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: path)
        }
        do {
            try await storage.store(Data([2]), forKey: "new")
            Issue.record("a store into a read-only directory succeeded")
        } catch {
            guard case .cache(.cannotWriteFile(let key, let path, let message)) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(key == "new" && path == storage.fileURL(forKey: "new").path)
            #expect(message.contains("Permission denied"))
        }
        #expect(await storage.value(forKey: "kept") == Data([1]))
    }

    @Test func twoInstancesShareADirectory() async throws {
        let dir = TemporaryDirectory()
        let first = await makeStorage(dir)
        let second = await makeStorage(dir)
        try await first.store(Data([1]), forKey: "from-first")
        try await second.store(Data([2]), forKey: "from-second")
        #expect(await second.value(forKey: "from-first") == Data([1]))
        #expect(await first.value(forKey: "from-second") == Data([2]))
        try await second.store(Data([3, 3]), forKey: "from-first")
        #expect(await first.value(forKey: "from-first") == Data([3, 3]))
        try await first.remove(forKey: "from-second")
        #expect(await second.value(forKey: "from-second") == nil)
        #expect(await first.statistics().entryCount == 1)
        #expect(await second.statistics().entryCount == 1)
        // Interleaved writes of both, then a clean by one: everything still consistent.
        await withTaskGroup(of: Void.self) { group in
            for (n, storage) in [first, second].enumerated() {
                group.addTask {
                    for i in 0..<50 { try? await storage.store(entryBytes("k\(i % 10)", size: 100 + i), forKey: "k\(i % 10)-\(n)") }
                }
            }
        }
        _ = await first.clean()
        for n in 0..<2 {
            for k in 0..<10 {
                let value = await second.value(forKey: "k\(k)-\(n)")
                #expect(value == nil || value == entryBytes("k\(k)", size: value!.count))
                #expect(value != nil)
            }
        }
    }

    @Test func concurrentReadersAndWriters() async throws {
        let dir = TemporaryDirectory()
        let storage = await makeStorage(dir, sizeLimit: 40_000)
        let torn = await withTaskGroup(of: Int.self) { group in
            for task in 0..<12 {
                group.addTask {
                    var bad = 0
                    for i in 0..<60 {
                        let k = (i * 5 + task) % 25
                        let key = "key\(k)"
                        let size = 500 + (task * 37 + i * 11) % 1_500
                        if i % 3 == 0 {
                            try? await storage.store(entryBytes(key, size: size), forKey: key)
                        } else if i % 29 == 0 {
                            try? await storage.remove(forKey: key)
                        } else if let value = await storage.value(forKey: key), value != entryBytes(key, size: value.count) {
                            bad += 1
                        }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(torn == 0)
        await storage.waitForPendingWork()
        _ = await storage.removeSizeExceeded()
        #expect(await storage.totalSize() <= 40_000)
        #expect(files(in: storage.tempDirectory).isEmpty)
    }
}
