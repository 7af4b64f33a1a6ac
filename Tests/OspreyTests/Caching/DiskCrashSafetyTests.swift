import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// The `osprey` executable (``OspreyBinary``) for the tests of its `cache` commands.
enum OspreyExecutable {
    /// The binary; the tests that run it are enabled only when ``hasWriteLoop`` (it exists).
    static var url: URL { OspreyBinary.url ?? URL(fileURLWithPath: "/nonexistent/osprey") }

    /// Whether the executable exists and has the hidden `cache debug-write-loop` helper
    /// (it does once `CacheCommand` is registered under the root command).
    static let hasWriteLoop: Bool = {
        guard FileManager.default.isExecutableFile(atPath: url.path),
            let run = try? ProcessRun.run(url, ["cache", "debug-write-loop", "--help"], within: .seconds(60))
        else { return false }
        return run.status == 0 && run.output.contains("--count")
    }()

    /// The bytes `osprey cache debug-write-loop` stores as entry `i` (see `CacheCommand.DebugWriteLoop`).
    static func loopBytes(_ i: Int, size: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7) })
    }
}

@Suite("DiskStorage crash safety", .timeLimit(.minutes(5)))
struct DiskCrashSafetyTests {
    /// The pid of a process that has exited (so it is not running).
    func deadPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()  // /bin/true does not hang
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

    /// The non-hidden files of the cache directory (entry files and whatever else is there).
    func entryFiles(_ storage: DiskStorage.Backend) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: storage.directory)) ?? []).filter { !$0.hasPrefix(".") }
    }

    @Test func openRecoversFromEveryCrashState() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("c")
        var storage = await open(url)
        for key in ["kept", "torn", "foreign-old", "foreign-young", "touched"] {
            try await storage.store(entryBytes(key, size: 2_000), forKey: key)
        }
        // 1. Temporary files: one from a dead writer, one from this live process (another instance's store).
        let deadTemp = storage.tempDirectory + "/\(try deadPid())-DEAD"
        let liveTemp = storage.tempDirectory + "/\(getpid())-LIVE"
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: deadTemp))
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: liveTemp))
        // 2. A torn entry (as power loss could leave one): its trailer cut off, the seal kept.
        let tornPath = storage.fileURL(forKey: "torn").path
        let sealed = try FileManager.default.attributesOfItem(atPath: tornPath)[.modificationDate] as? Date
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: tornPath))
        try handle.truncate(atOffset: 1_000)
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: try #require(sealed)], ofItemAtPath: tornPath)
        // 3. Foreign files in place of entries: an old one and a young one (maybe another writer's).
        for key in ["foreign-old", "foreign-young"] {
            try FileManager.default.removeItem(at: storage.fileURL(forKey: key))
            try entryBytes("other", size: 2_000).write(to: storage.fileURL(forKey: key))
        }
        try ageFile(storage.fileURL(forKey: "foreign-old").path, by: 120)
        // 4. An entry modified in place: its seal is broken.
        let touched = try FileHandle(forWritingTo: storage.fileURL(forKey: "touched"))
        try touched.write(contentsOf: Data([0xFF]))
        try touched.close()

        storage = await open(url)
        #expect(!FileManager.default.fileExists(atPath: deadTemp))
        #expect(FileManager.default.fileExists(atPath: liveTemp))
        #expect(!FileManager.default.fileExists(atPath: tornPath))
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "foreign-old").path))
        #expect(FileManager.default.fileExists(atPath: storage.fileURL(forKey: "foreign-young").path))
        #expect(await storage.value(forKey: "kept") == entryBytes("kept", size: 2_000))
        #expect(await storage.statistics().entryCount == 1)
        // A young foreign file is not served, and a read removes it; so is a file modified in place.
        #expect(!storage.isCached(forKey: "foreign-young"))
        #expect(await storage.value(forKey: "foreign-young") == nil)
        #expect(!FileManager.default.fileExists(atPath: storage.fileURL(forKey: "foreign-young").path))
        #expect(await storage.value(forKey: "touched") == nil)
        #expect(entryFiles(storage) == [storage.fileURL(forKey: "kept").lastPathComponent])
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
            let target = "stored \(3 + round * 2)"
            while !seen.contains(target + "\n") {
                let line = try await process.nextLine(of: pipe, "`osprey cache debug-write-loop` to print `\(target)`")
                if line.isEmpty { break }
                seen += line + "\n"
            }
            kill(process.processIdentifier, SIGKILL)
            _ = try await process.exitStatus("`osprey cache debug-write-loop` to die of SIGKILL")
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
            // The index rebuilt at the next open holds every file there, and only valid entries are there.
            let strict = await open(url, grace: 0)
            let files = entryFiles(strict)
            #expect(await strict.statistics().entryCount == files.count)
            #expect(files.count >= completed + 1)
        }
    }
}
