import Foundation
import Testing

@testable import Osprey

/// The index snapshot: an open takes its records of unchanged files without reading them, ignores
/// a damaged or foreign one, and still finds what other instances changed since it was written.
@Suite("DiskStorage index snapshot", .timeLimit(.minutes(5)))
struct DiskIndexSnapshotTests {
    func open(_ url: URL, clock: TestClock) async -> DiskStorage.Backend {
        let storage = DiskStorage.Backend(config: .init(directory: url, accessRecordInterval: 60, now: clock.function))
        await storage.waitForPendingWork()
        return storage
    }

    func record(_ storage: DiskStorage.Backend, _ key: String) -> DiskEntryIndex.Entry? {
        storage.state.withLock { $0.index[DiskStorage.Backend.hash(key)] }
    }

    /// Three entries, "b" read last, and a snapshot of that index; then "a"'s file gets an access
    /// time the snapshot does not know (same inode, still sealed): only a scan would see it.
    func prepare(_ url: URL, clock: TestClock) async throws -> String {
        let storage = await open(url, clock: clock)
        for key in ["a", "b", "c"] {
            clock.advance(by: 10)
            try await storage.store(entryBytes(key, size: 1_000), forKey: key)
        }
        clock.advance(by: 10)
        #expect(await storage.value(forKey: "b") != nil)
        storage.flushAccessRecords()
        let path = storage.fileURL(forKey: "a").path
        let seal = try #require(DiskFileIO.info(path)).mtimeSeconds
        #expect(DiskFileIO.setTimes(path, accessed: 2_000_000_000, mtimeSeconds: seal))
        return storage.directory
    }

    @Test func aValidSnapshotIsAdoptedWithoutReadingTheFiles() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let directory = try await prepare(url, clock: clock)
        #expect(FileManager.default.fileExists(atPath: directory + "/" + DiskIndexSnapshot.fileName))
        let reopened = await open(url, clock: clock)
        // The snapshot's last access, not the file's: the file was not read.
        let a = try #require(record(reopened, "a"))
        #expect(a.lastAccess == 1_700_000_010 && !a.verified)
        #expect(record(reopened, "b")?.lastAccess == 1_700_000_040)
        #expect(reopened.estimatedTotalSize == 3_000)
        // LRU order from the snapshot: "a" (oldest there) goes first.
        #expect(reopened.state.withLock { state in state.index.positionsByLastAccess().map { state.index.all[$0].value.key } } == ["a", "c", "b"])
        // The first read checks the file in full and marks the record verified.
        #expect(await reopened.value(forKey: "a") == entryBytes("a", size: 1_000))
        #expect(record(reopened, "a")?.verified == true)
    }

    @Test(arguments: ["flipped", "truncated", "foreign", "version", "empty"])
    func aDamagedOrForeignSnapshotIsIgnored(_ damage: String) async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let directory = try await prepare(url, clock: clock)
        let snapshotURL = URL(fileURLWithPath: directory + "/" + DiskIndexSnapshot.fileName)
        var bytes = try Data(contentsOf: snapshotURL)
        switch damage {
        case "flipped": bytes[bytes.count / 2] ^= 0x01
        case "truncated": bytes.removeLast()
        case "foreign": bytes = Data("not a snapshot, just some text".utf8)
        case "version": bytes[8] = 2
        default: bytes = Data()
        }
        try bytes.write(to: snapshotURL)
        let expected: DiskIndexSnapshot.Failure = damage == "flipped" || damage == "truncated" ? .corrupt : .foreign
        #expect(throws: expected) { try DiskIndexSnapshot.read(directory: directory) }
        let reopened = await open(url, clock: clock)
        // Rebuilt from the files: "a" has its file's access time.
        #expect(record(reopened, "a")?.lastAccess == 2_000_000_000)
        #expect(reopened.estimatedTotalSize == 3_000)
        #expect(await reopened.value(forKey: "c") == entryBytes("c", size: 1_000))
        // The open wrote a good snapshot back.
        #expect(try DiskIndexSnapshot.read(directory: directory).count == 3)
    }

    @Test func filesAddedReplacedOrRemovedAfterTheSnapshotAreSeen() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let directory = try await prepare(url, clock: clock)
        let before = try DiskIndexSnapshot.read(directory: directory)
        // Another instance's work after the snapshot, written without a new snapshot.
        let other = DiskStorage.Backend(config: .init(directory: url, accessRecordInterval: 60, cleansOnOpen: false, now: clock.function))
        await other.waitForPendingWork()
        try await other.store(entryBytes("new", size: 700), forKey: "new")
        try await other.store(entryBytes("c", size: 300), forKey: "c")
        try FileManager.default.removeItem(at: other.fileURL(forKey: "b"))
        #expect(try DiskIndexSnapshot.read(directory: directory) == before)
        let reopened = await open(url, clock: clock)
        #expect(record(reopened, "new")?.size == 700)
        #expect(record(reopened, "c")?.size == 300)
        #expect(record(reopened, "b") == nil)
        #expect(reopened.estimatedTotalSize == 1_000 + 700 + 300)
        #expect(await reopened.value(forKey: "c") == entryBytes("c", size: 300))
        #expect(await reopened.value(forKey: "b") == nil)
        #expect(await reopened.value(forKey: "new") == entryBytes("new", size: 700))
    }

    @Test func anExpiryExtendedAfterTheSnapshotIsNotCleanedAway() async throws {
        let dir = TemporaryDirectory()
        let clock = TestClock()
        let url = dir.url.appendingPathComponent("c")
        let first = await open(url, clock: clock)
        try await first.store(entryBytes("x", size: 100), forKey: "x", expiration: .seconds(100))
        first.flushAccessRecords()
        // Another instance extends it (file times only, no new snapshot): the snapshot says expired at +100.
        let path = first.fileURL(forKey: "x").path
        #expect(DiskFileIO.setTimes(path, accessed: 1_700_000_050, mtimeSeconds: 1_700_000_150))
        clock.advance(by: 120)
        let reopened = await open(url, clock: clock)
        #expect(record(reopened, "x")?.expires == 1_700_000_100)
        let report = await reopened.removeExpired()
        #expect(report.removed.isEmpty)
        #expect(record(reopened, "x")?.expires == 1_700_000_150)
        #expect(await reopened.value(forKey: "x") == entryBytes("x", size: 100))
    }

    @Test func theSnapshotRoundTripsEveryField() throws {
        var entry = DiskEntryIndex.Entry(
            fileName: DiskStorage.Backend.hash("k") + ".png", inode: 42, key: "k/é", size: 12,
            created: 1.5, policy: .days(3), expires: nil, lastAccess: 7.25)
        var other = DiskEntryIndex.Entry(
            fileName: DiskStorage.Backend.hash("x"), inode: 7, key: "x", size: 0,
            created: 2, policy: .seconds(9.5), expires: 11, lastAccess: 3)
        let bytes = DiskIndexSnapshot.encode(["h1": entry, "h2": other])
        let decoded = try bytes.withUnsafeBytes { raw in try DiskIndexSnapshot.decode(raw) }
        entry.verified = false
        other.verified = false
        #expect(decoded[DiskStorage.Backend.hash("k")] == entry)
        #expect(decoded[DiskStorage.Backend.hash("x")] == other)
    }
}
