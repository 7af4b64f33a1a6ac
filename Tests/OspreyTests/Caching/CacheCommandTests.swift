import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("CacheCommand CLI", .enabled(if: OspreyExecutable.hasWriteLoop, "needs .build/debug/osprey with `cache`"), .timeLimit(.minutes(5)))
struct CacheCommandTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let run = try await ProcessRun.run(OspreyExecutable.url, arguments)
        return (run.status, run.output)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func statsCleanClear() async throws {
        let dir = TemporaryDirectory()
        let cacheDir = dir.url.appendingPathComponent("c").path
        #expect(try await run(["cache", "debug-write-loop", "--cache-dir", cacheDir, "--count", "4", "--size", "1000"]).status == 0)

        let stats = try await run(["cache", "stats", "--cache-dir", cacheDir, "--json"])
        #expect(stats.status == 0)
        let statsObject = try json(stats.output)
        #expect(statsObject["entryCount"] as? Int == 4)
        #expect(statsObject["totalSize"] as? Int == 4_000 + (0 + 1 + 2 + 3) * 4_096)
        #expect(statsObject["sizeLimit"] as? Int == 1 << 30)

        let text = try await run(["cache", "stats", "--cache-dir", cacheDir])
        #expect(text.output.contains("entries: 4"))

        // Limit 12 000: total 28 576 goes down to at most 9 600, least recently used first.
        let clean = try await run(["cache", "clean", "--cache-dir", cacheDir, "--size-limit", "12000"])
        #expect(clean.status == 0)
        #expect(clean.output.contains("removed entry-0 (1000 bytes, sizeLimit)"))
        let after = try json(try await run(["cache", "stats", "--cache-dir", cacheDir, "--json"]).output)
        #expect((after["totalSize"] as? Int).map { $0 <= 9_600 } == true)

        let clear = try await run(["cache", "clear", "--cache-dir", cacheDir, "--json"])
        #expect(clear.status == 0)
        #expect(try json(try await run(["cache", "stats", "--cache-dir", cacheDir, "--json"]).output)["entryCount"] as? Int == 0)
        #expect(try await run(["cache", "stats", "--cache-dir", cacheDir, "--size-limit", "-1"]).status == 64)
    }
}
