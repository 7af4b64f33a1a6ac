import Foundation
import Testing

@testable import Osprey

/// The in-memory index of the disk storage: what other instances do, what restarts keep, what an
/// old or foreign directory holds.
@Suite("DiskStorage index", .timeLimit(.minutes(5)))
struct DiskIndexTests {
    func open(_ url: URL, clock: TestClock, sizeLimit: Int = 0, accessRecordInterval: TimeInterval = 60) async -> DiskStorage.Backend {
        let storage = DiskStorage.Backend(
            config: .init(
                directory: url, sizeLimit: sizeLimit, accessRecordInterval: accessRecordInterval,
                now: clock.function))
        await storage.waitForPendingWork()
        return storage
    }

    @Test func aSecondInstancesWriteIsSeenByTheFirst() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let first = await open(url, clock: clock)
        try await first.store(entryBytes("mine", size: 1_000), forKey: "mine")
        let second = await open(url, clock: clock)
        try await second.store(entryBytes("theirs", size: 3_000), forKey: "theirs")
        // Not in the first's index yet: the file is found on a check, a read adopts it.
        #expect(first.isCached(forKey: "theirs"))
        #expect(first.estimatedTotalSize == 1_000)
        #expect(await first.value(forKey: "theirs") == entryBytes("theirs", size: 3_000))
        #expect(first.estimatedTotalSize == 4_000)
        // Replaced by the second: the first serves the new bytes.
        try await second.store(entryBytes("theirs", size: 500), forKey: "theirs")
        #expect(await first.value(forKey: "theirs") == entryBytes("theirs", size: 500))
        // Stored and removed by the second: a listing (statistics, cleans) brings the first's index in line.
        try await second.store(entryBytes("x", size: 200), forKey: "x")
        try await second.remove(forKey: "mine")
        let stats = await first.statistics()
        #expect(stats.entryCount == 2 && stats.totalSize == 700)
        #expect(await first.value(forKey: "mine") == nil)
    }

    @Test func foreignAndTruncatedFilesAreMissesAndRemoved() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let storage = await open(dir.url.appendingPathComponent("c"), clock: clock)
        try await storage.store(entryBytes("a", size: 5_000), forKey: "a")
        try await storage.store(entryBytes("b", size: 5_000), forKey: "b")
        // A foreign file where an entry would be.
        let foreign = storage.fileURL(forKey: "foreign")
        try Data("not an entry at all".utf8).write(to: foreign)
        #expect(!storage.isCached(forKey: "foreign"))
        #expect(await storage.value(forKey: "foreign") == nil)
        #expect(!FileManager.default.fileExists(atPath: foreign.path))
        // A valid entry file under another key's name: its key does not match.
        try FileManager.default.removeItem(at: storage.fileURL(forKey: "b"))
        try FileManager.default.copyItem(at: storage.fileURL(forKey: "a"), to: storage.fileURL(forKey: "b"))
        #expect(await storage.value(forKey: "b") == nil)
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "b").path))
        // A truncated entry, even with its seal put back.
        let path = storage.fileURL(forKey: "a").path
        let sealed = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        try Data(try Data(contentsOf: storage.fileURL(forKey: "a")).dropLast(1)).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: try #require(sealed)], ofItemAtPath: path)
        #expect(await storage.value(forKey: "a") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        // A foreign file no key asks for goes at the next clean (once older than the grace period).
        let stray = storage.directoryURL.appendingPathComponent(DiskStorage.Backend.hash("stray"))
        try Data("stray".utf8).write(to: stray)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: stray.path)
        let report = await storage.clean()
        #expect(report.removed.map(\.reason) == [.corrupt])
        #expect(!FileManager.default.fileExists(atPath: stray.path))
    }

    @Test func lruOrderSurvivesARestart() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        var storage = await open(url, clock: clock)
        for key in ["a", "b", "c"] {
            clock.advance(by: 1)
            try await storage.store(entryBytes(key, size: 1_000), forKey: key)
        }
        clock.advance(by: 10)
        // Within the record interval: the access is in memory only until the storage goes away.
        #expect(await storage.value(forKey: "a") != nil)
        await storage.waitForPendingWork()
        storage = await open(url, clock: clock)
        // Over the limit at the next open: "b" (the oldest access) goes; "a", read last, stays.
        let smaller = await open(url, clock: clock, sizeLimit: 2_500)
        #expect(smaller.isCached(forKey: "a") && smaller.isCached(forKey: "c"))
        #expect(!smaller.isCached(forKey: "b"))
        _ = storage
    }

    @Test func expiryAndExtensionLiveInTheFileTimes() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let storage = await open(url, clock: clock, accessRecordInterval: 0)
        try await storage.store(Data([1]), forKey: "k", expiration: .seconds(100))
        try await storage.store(Data([2]), forKey: "forever", expiration: .never)
        let modified = { (key: String) in
            (try? FileManager.default.attributesOfItem(atPath: storage.fileURL(forKey: key).path)[.modificationDate] as? Date)?.timeIntervalSince1970
        }
        #expect(modified("k") == clock.now.timeIntervalSince1970 + 100)
        #expect(modified("forever") == 0)
        clock.advance(by: 50)
        #expect(await storage.value(forKey: "k") == Data([1]))
        #expect(modified("k") == clock.now.timeIntervalSince1970 + 100)
        // Another instance sees the extension.
        clock.advance(by: 60)
        let other = await open(url, clock: clock)
        #expect(other.isCached(forKey: "k"))
        #expect(await other.value(forKey: "forever") == Data([2]))
    }

    @Test func trailerRoundTripsAndRejectsDamage() throws {
        for policy in [StorageExpiration.never, .seconds(12.5), .days(3), .date(Date(timeIntervalSince1970: 1_800_000_000))] {
            let entry = DiskEntryFile(key: "https://x.org/é.jpg", dataSize: 10, created: 1_700_000_000.25, policy: policy, meta: Data([7, 8]))
            let file = Array(repeating: UInt8(9), count: 10) + entry.trailer()
            var needed = 0
            let parsed = file.withUnsafeBytes { DiskEntryFile.parse(tail: $0, fileSize: file.count, needed: &needed) }
            #expect(parsed == entry)
            // Only the end of the file: says how much it needs.
            let tail = Array(file.suffix(DiskEntryFile.fixedSize))
            #expect(tail.withUnsafeBytes { DiskEntryFile.parse(tail: $0, fileSize: file.count, needed: &needed) } == nil)
            #expect(needed == entry.trailerSize)
            // Any flipped byte of the trailer, a missing byte or an extra one: not an entry.
            for index in stride(from: 10, to: file.count, by: 7) {
                var damaged = file
                damaged[index] ^= 0x20
                #expect(damaged.withUnsafeBytes { DiskEntryFile.parse(tail: $0, fileSize: damaged.count, needed: &needed) } == nil)
            }
            let short = Array(file.dropFirst())
            #expect(short.withUnsafeBytes { DiskEntryFile.parse(tail: $0, fileSize: short.count, needed: &needed) } == nil)
            let long = [0] + file
            #expect(long.withUnsafeBytes { DiskEntryFile.parse(tail: $0, fileSize: long.count, needed: &needed) } == nil)
        }
    }

    @Test func metaIsKeptInTheTrailerApartFromTheData() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let storage = await open(url, clock: clock)
        let validator = CacheValidator(etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        try await storage.store(entryBytes("a", size: 2_000), forKey: "a", expiration: .seconds(100), meta: validator.diskMeta)
        try await storage.store(entryBytes("b", size: 10), forKey: "b")
        // The data is given back as stored; the meta is read without it, also by a new instance.
        #expect(await storage.value(forKey: "a") == entryBytes("a", size: 2_000))
        #expect(storage.meta(forKey: "a").flatMap(CacheValidator.init(diskMeta:)) == validator)
        #expect(storage.meta(forKey: "b") == Data())
        #expect(storage.meta(forKey: "missing") == nil)
        let other = await open(url, clock: clock)
        #expect(other.meta(forKey: "a").flatMap(CacheValidator.init(diskMeta:)) == validator)
        // One file per entry: the validators have no entry of their own.
        #expect(try entryFiles(in: url).count == 2)
        clock.advance(by: 101)
        #expect(storage.meta(forKey: "a") == nil)
    }

    @Test func metaFollowsAnExpiryExtendedInMemoryOnly() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let storage = await open(dir.url.appendingPathComponent("c"), clock: clock)
        try await storage.store(entryBytes("a", size: 100), forKey: "a", expiration: .seconds(100), meta: Data("etag:x\n".utf8))
        clock.advance(by: 50)
        // A hit extends the expiry to 150 s in the index; the file's seal still says 100 s.
        #expect(await storage.value(forKey: "a", extendingExpiration: .cacheTime) != nil)
        clock.advance(by: 70)
        #expect(storage.isCached(forKey: "a"))
        #expect(storage.meta(forKey: "a") == Data("etag:x\n".utf8))
    }

    @Test func validatorsOutsideHeaderSyntaxAreLeftOut() {
        #expect(CacheValidator(etag: "\"a\"\nx", lastModified: "Wed").diskMeta == Data("last-modified:Wed\n".utf8))
        #expect(CacheValidator(diskMeta: Data()) == nil)
        #expect(CacheValidator(diskMeta: Data("etag:\"e:1\"\n".utf8)) == CacheValidator(etag: "\"e:1\""))
    }

}

/// The entry files of a cache directory (not its snapshot, not its temporary directory).
func entryFiles(in url: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
        var isDirectory: ObjCBool = false
        return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
            && !isDirectory.boolValue
    }
}
