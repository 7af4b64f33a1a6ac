import Foundation
import Testing

@testable import OspreyServer

@Suite("Per-URL tables and the result cache stay within their bounds under unique URLs", .timeLimit(.minutes(1)))
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

@Suite("Idle trimming: the worker limiter tells idle spells", .timeLimit(.minutes(1)))
struct IdleSpellTests {
    @Test("idle counts finished jobs, so an idle spell after work is told from one without")
    func idleAfterWork() async throws {
        let limiter = WorkLimiter(workers: 2, queueLimit: 2)
        #expect(limiter.idle.isIdle)
        #expect(limiter.idle.finished == 0)
        let busy = try await limiter.run { () async throws(ServerError) in limiter.idle.isIdle }
        #expect(!busy)
        _ = try await limiter.run { () async throws(ServerError) in 1 }
        #expect(limiter.idle.isIdle)
        #expect(limiter.idle.finished == 2)
    }
}

@Suite("Allocator settings: the mapping threshold stays where the server fixed it", .timeLimit(.minutes(1)))
struct MallocSettingsTests {
    @Test("after a large block is freed, a smaller one over the threshold still gets a mapping of its own")
    func mmapThresholdStaysFixed() throws {
        #if canImport(Glibc)
            Malloc.fixMmapThreshold()
            // Left to itself, glibc raises its threshold to 30 MiB on this free. The probe is larger
            // than any free chunk the arenas are likely to hold, which glibc would reuse first.
            let large = try #require(malloc(30 << 20))
            free(large)
            let block = try #require(malloc(20 << 20))
            defer { free(block) }
            #expect(Malloc.isMapped(block))
            let small = try #require(malloc(64 << 10))
            defer { free(small) }
            #expect(!Malloc.isMapped(small), "blocks under the threshold stay in the arenas")
        #endif
    }
}
