import Foundation
import Testing
@testable import Osprey

/// The `osprey` executable next to the test bundle (`.build/debug/osprey`), or `$OSPREY_BIN`.
enum OspreyExecutable {
    static var url: URL {
        if let override = ProcessInfo.processInfo.environment["OSPREY_BIN"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("osprey")
    }

    /// Whether the executable exists and has the hidden `cache debug-write-loop` helper
    /// (it does once `CacheCommand` is registered under the root command).
    static let hasWriteLoop: Bool = {
        guard FileManager.default.isExecutableFile(atPath: url.path) else { return false }
        let process = Process()
        process.executableURL = url
        process.arguments = ["cache", "debug-write-loop", "--help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 && String(decoding: output, as: UTF8.self).contains("--count")
    }()

    /// The bytes `osprey cache debug-write-loop` stores as entry `i` (see `CacheCommand.DebugWriteLoop`).
    static func loopBytes(_ i: Int, size: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7) })
    }
}

@Suite("DiskStorage crash safety")
struct DiskCrashSafetyTests {
    /// The pid of a process that has exited (so it is not running).
    func deadPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    func open(_ url: URL, grace: TimeInterval = 60) async -> DiskStorage.Backend {
        let storage = DiskStorage.Backend(config: .init(directory: url, sizeLimit: 0, recoveryGracePeriod: grace))
        await storage.waitForPendingWork()
        return storage
    }

    func ageFile(_ path: String, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-seconds)], ofItemAtPath: path)
    }

    @Test func openRecoversFromEveryCrashState() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("c")
        var storage = await open(url)
        for key in ["kept", "replaced", "missing", "orphan-old", "orphan-young"] {
            try await storage.store(entryBytes(key, size: 2_000), forKey: key)
        }
        let hash = DiskStorage.Backend.hash
        // 1. Temporary files: one from a dead writer, one from this live process (another instance's store).
        let deadTemp = storage.tempDirectory + "/\(try deadPid())-DEAD"
        let liveTemp = storage.tempDirectory + "/\(getpid())-LIVE"
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: deadTemp))
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: liveTemp))
        // 2. Killed between the two renames: new data in place, old index (another inode). Old enough.
        let replacedPath = storage.fileURL(forKey: "replaced").path
        try FileManager.default.removeItem(atPath: replacedPath)
        try entryBytes("other", size: 2_000).write(to: URL(fileURLWithPath: replacedPath))
        try ageFile(replacedPath, by: 120)
        // 3. An index whose data file is gone.
        try FileManager.default.removeItem(at: storage.fileURL(forKey: "missing"))
        // 4. Data files without an index: an old one and a young one (maybe another instance mid-store).
        try FileManager.default.removeItem(atPath: storage.indexPath(hash("orphan-old")))
        try FileManager.default.removeItem(atPath: storage.indexPath(hash("orphan-young")))
        try ageFile(storage.fileURL(forKey: "orphan-old").path, by: 120)

        storage = await open(url)
        #expect(!FileManager.default.fileExists(atPath: deadTemp))
        #expect(FileManager.default.fileExists(atPath: liveTemp))
        #expect(!FileManager.default.fileExists(atPath: replacedPath))
        #expect(!FileManager.default.fileExists(atPath: storage.indexPath(hash("replaced"))))
        #expect(!FileManager.default.fileExists(atPath: storage.indexPath(hash("missing"))))
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "orphan-old").path))
        #expect(FileManager.default.fileExists(atPath: storage.fileURL(forKey: "orphan-young").path))
        #expect(await storage.value(forKey: "orphan-young") == nil)
        #expect(await storage.value(forKey: "kept") == entryBytes("kept", size: 2_000))
        #expect(await storage.statistics().entryCount == 1)

        // A young replaced data file is not served either, only left for its writer.
        try await storage.store(entryBytes("young", size: 100), forKey: "young")
        let youngPath = storage.fileURL(forKey: "young").path
        try FileManager.default.removeItem(atPath: youngPath)
        try entryBytes("imposter", size: 100).write(to: URL(fileURLWithPath: youngPath))
        #expect(await storage.value(forKey: "young") == nil)
        #expect(!storage.isCached(forKey: "young"))
        // With no grace period everything inconsistent goes.
        storage = await open(url, grace: 0)
        #expect(storage.scan(strict: true).broken.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "orphan-young").path))
    }

    @Test(.enabled(if: OspreyExecutable.hasWriteLoop, "needs .build/debug/osprey with `cache debug-write-loop`"))
    func sigkillMidWriteLeavesNoTornEntry() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("c")
        let entrySize = 1 << 20
        var completed = -1
        for round in 0..<3 {
            let process = Process()
            process.executableURL = OspreyExecutable.url
            process.arguments = ["cache", "debug-write-loop", "--cache-dir", url.path, "--size", "\(entrySize)"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            // Let it complete a few stores (a different number each round), then kill it mid-stream.
            var seen = ""
            let target = "stored \(3 + round * 2)\n"
            while !seen.contains(target) {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let lines = seen.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") }
            completed = max(completed, lines.max() ?? -1)
            #expect(completed >= 3)

            // Reopen: no temporary file survives the dead writer, no torn or mixed entry is served.
            let storage = await open(url)
            #expect((try? FileManager.default.contentsOfDirectory(atPath: storage.tempDirectory))?.isEmpty == true)
            for i in 0...(completed + 3) {
                let value = await storage.value(forKey: "entry-\(i)")
                if i <= completed {
                    #expect(value != nil, "entry-\(i) was reported stored")
                }
                if let value {
                    #expect(value == OspreyExecutable.loopBytes(i, size: entrySize + (i % 7) * 4_096), "entry-\(i) is torn")
                }
            }
            let strict = await open(url, grace: 0)
            #expect(strict.scan(strict: true).broken.isEmpty)
        }
    }
}
