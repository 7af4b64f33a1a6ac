import Foundation
import Osprey
import Testing

@testable import OspreyServer

@Suite("Per-URL tables and the result cache stay within their bounds under unique URLs", .timeLimit(.minutes(3)))
struct BoundedMemoryTests {
    @Test("an expiring table drops entries past their time as it grows, and keeps those within it")
    func expiringTable() {
        let table = ExpiringTable<Int>(pruneAt: 100)
        for index in 0..<1_000 { table.set("http://origin/\(index).jpg", index, until: .now - .seconds(1)) }
        #expect(table.count <= 100)
        let fresh = ExpiringTable<Int>(pruneAt: 100)
        for index in 0..<300 { fresh.set("http://origin/\(index).jpg", index, until: .now + .seconds(3600)) }
        #expect(fresh.count == 300)
        #expect(fresh.get("http://origin/0.jpg") == 0)
        fresh.set("http://origin/0.jpg", nil, until: .now)
        #expect(fresh.get("http://origin/0.jpg") == nil)
    }

    @Test("a table with a capacity holds about that many entries within their time, the latest ones")
    func expiringTableCapacity() {
        let table = ExpiringTable<Int>(pruneAt: 100, capacity: 400)
        let start = ContinuousClock.now
        for index in 0..<5_000 { table.set("http://origin/\(index).jpg", index, until: start + .seconds(3600 + index)) }
        #expect(table.count <= 400)
        #expect(table.count >= 200)
        #expect(table.get("http://origin/4999.jpg") == 4999)
        #expect(table.get("http://origin/0.jpg") == nil)
        // Unlimited by default: every entry within its time stays.
        let unlimited = ExpiringTable<Int>(pruneAt: 100)
        for index in 0..<5_000 { unlimited.set("http://origin/\(index).jpg", index, until: start + .seconds(3600)) }
        #expect(unlimited.count == 5_000)
    }

    @Test("origin policies of sources older than the origin TTL are dropped as new sources come")
    func originPolicies() throws {
        let policies = OriginPolicies(lifetime: .zero, pruneAt: 50)
        for index in 0..<1_000 {
            policies.record(OriginPolicy(cacheControl: "max-age=60"), for: try #require(URL(string: "http://origin/\(index).jpg")))
        }
        #expect(policies.count <= 50)
        let last = try #require(URL(string: "http://origin/999.jpg"))
        #expect(policies.policy(for: last)?.maxAge == 60)
        let kept = OriginPolicies(lifetime: .seconds(3600), pruneAt: 50)
        for index in 0..<200 { kept.record(OriginPolicy(noStore: true), for: try #require(URL(string: "http://origin/\(index).jpg"))) }
        #expect(kept.count == 200)
        #expect(kept.policy(for: try #require(URL(string: "http://origin/0.jpg")))?.noStore == true)
    }

    @Test("many small results count their keys and bookkeeping against the memory limit")
    func resultCacheCost() async {
        let limit = 64 << 10
        let cache = ResultCache(memoryBytes: limit, directory: nil, diskBytes: 0, lifetime: 3600)
        let keys = (0..<1_000).map { "http://origin/photo.jpg|resize-\($0)|jpeg:80" }
        for key in keys { await cache.store(ResultCache.Entry(data: Data(count: 16), format: .jpeg), forKey: key, lifetime: 3600) }
        var held = 0
        for key in keys where await cache.lookup(key) != nil { held += 1 }
        #expect(held > 0)
        #expect(held <= limit / ResultCache.entryOverhead)
        #expect(cache.memoryCost <= limit)
    }
}

@Suite("Memory trimming: every interval in which jobs finished, busy or idle", .timeLimit(.minutes(3)))
struct MemoryTrimTests {
    @Test("the limiter counts finished jobs")
    func finishedJobs() async throws {
        let limiter = WorkLimiter(workers: 2, queueLimit: 2)
        #expect(limiter.finished == 0)
        let during = try await limiter.run { () async throws(ServerError) in limiter.finished }
        #expect(during == 0)
        _ = try await limiter.run { () async throws(ServerError) in 1 }
        #expect(limiter.finished == 2)
    }

    @Test("a server that never goes idle is trimmed once jobs finish; no jobs, no trim")
    func trimsWhileBusy() async throws {
        let limiter = WorkLimiter(workers: 2, queueLimit: 2)
        let trims = TrimCount()
        let service = MemoryTrimService(limiter: limiter, interval: .milliseconds(10), trim: { trims.count.withLock { $0 += 1 } })
        let task = Task { try await service.run() }
        defer { task.cancel() }
        // One job always running, so the limiter is never idle; others finish beside it.
        let (release, released) = AsyncStream<Void>.makeStream()
        let holder = Task { try await limiter.run { () async throws(ServerError) in for await _ in release {} } }
        defer {
            released.finish()
            holder.cancel()
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(trims.count.withLock { $0 } == 0, "no job finished yet")
        for _ in 0..<500 where trims.count.withLock({ $0 }) == 0 {
            _ = try await limiter.run { () async throws(ServerError) in 1 }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(trims.count.withLock { $0 } > 0)
        #expect(limiter.running == 1, "still busy")
    }
}

/// The trims a test's service made.
final class TrimCount: Sendable {
    let count = Locked(0)
}
