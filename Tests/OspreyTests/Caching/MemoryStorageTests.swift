import Foundation
import Testing

@testable import Osprey

@Suite("MemoryStorage", .timeLimit(.minutes(5)))
struct MemoryStorageTests {
    func makeStorage(
        clock: TestClock = TestClock(), totalCost: Int = 1_000, count: Int = .max,
        ratio: Double = 1, expiration: StorageExpiration = .seconds(300),
        extending: ExpirationExtending = .cacheTime,
        policy: MemoryStorage.EvictionPolicy = .lru
    ) -> MemoryStorage.Backend<String> {
        MemoryStorage.Backend(
            config: .init(
                totalCostLimit: totalCost, countLimit: count, entryCostLimitRatio: ratio,
                expiration: expiration, extendingExpiration: extending,
                cleanInterval: 0, evictionPolicy: policy, now: clock.function))
    }

    @Test func defaultsAreDocumentedOnes() {
        let config = MemoryStorage.Config()
        #expect(config.totalCostLimit == min(Int(ProcessInfo.processInfo.physicalMemory / 4), 1 << 30))
        #expect(config.countLimit == .max)
        #expect(config.expiration == .seconds(300))
        #expect(config.extendingExpiration == .cacheTime)
        #expect(config.cleanInterval == 120)
        #expect(config.evictionPolicy == .lru)
    }

    @Test("a lookup answers a hit or a miss; a value asked for since a miss is found once something is stored, a replacing store included")
    func missTokens() throws {
        let storage = makeStorage()
        guard case .miss(let miss) = storage.lookup(forKey: "k1") else {
            Issue.record("an empty storage misses")
            return
        }
        _ = storage.value(forKey: "missing")
        storage.remove(forKey: "k1")
        storage.removeAll()
        #expect(storage.value(forKey: "k1", ifStoredSince: miss) == nil, "reads and removals store nothing: the miss holds")
        try storage.store("a", forKey: "k1", cost: 10)
        #expect(storage.value(forKey: "k1", ifStoredSince: miss) == "a")
        guard case .hit("a") = storage.lookup(forKey: "k1"), case .miss(let later) = storage.lookup(forKey: "k2") else {
            Issue.record("a stored key hits, another misses")
            return
        }
        try storage.store("b", forKey: "k1", cost: 10)
        #expect(storage.value(forKey: "k1", ifStoredSince: later) == "b", "a replacing store counts")
        #expect(storage.value(forKey: "k2", ifStoredSince: later) == nil)
        #expect(storage.value(forKey: "k1", ifStoredSince: nil) == "b", "no miss to go by: looked up")
    }

    @Test func storesAndReadsAndCountsCost() throws {
        let storage = makeStorage()
        try storage.store("a", forKey: "k1", cost: 10)
        try storage.store("b", forKey: "k2", cost: 20)
        #expect(storage.value(forKey: "k1") == "a")
        #expect(storage.value(forKey: "missing") == nil)
        #expect(storage.totalCost == 30)
        #expect(storage.count == 2)
        try storage.store("c", forKey: "k1", cost: 5)
        #expect(storage.value(forKey: "k1") == "c")
        #expect(storage.totalCost == 25)
        storage.remove(forKey: "k2")
        #expect(storage.totalCost == 5 && storage.count == 1)
        storage.removeAll()
        #expect(storage.totalCost == 0 && storage.count == 0)
        #expect(storage.value(forKey: "k1") == nil)
    }

    @Test func evictsLeastRecentlyUsedFirst() throws {
        let storage = makeStorage(totalCost: 30)
        try storage.store("a", forKey: "a", cost: 10)
        try storage.store("b", forKey: "b", cost: 10)
        try storage.store("c", forKey: "c", cost: 10)
        _ = storage.value(forKey: "a")  // a is now the most recent; b the least
        try storage.store("d", forKey: "d", cost: 10)
        #expect(storage.keys == ["d", "a", "c"])
        #expect(!storage.isCached(forKey: "b"))
        #expect(storage.totalCost == 30)
    }

    @Test func countLimitEvicts() throws {
        let storage = makeStorage(count: 2)
        for key in ["a", "b", "c"] { try storage.store(key, forKey: key, cost: 1) }
        #expect(storage.keys == ["c", "b"])
    }

    @Test func clockGivesReferencedEntriesASecondChance() throws {
        let storage = makeStorage(totalCost: 30, policy: .clock)
        try storage.store("a", forKey: "a", cost: 10)
        try storage.store("b", forKey: "b", cost: 10)
        try storage.store("c", forKey: "c", cost: 10)
        _ = storage.value(forKey: "a")  // a is oldest but referenced: b goes instead
        try storage.store("d", forKey: "d", cost: 10)
        #expect(storage.isCached(forKey: "a"))
        #expect(!storage.isCached(forKey: "b"))
        #expect(storage.isCached(forKey: "c") && storage.isCached(forKey: "d"))
    }

    @Test func rejectsEntriesOverThePerEntryLimit() throws {
        let storage = makeStorage(totalCost: 1_000, ratio: 0.1)
        try storage.store("old", forKey: "big", cost: 50)
        #expect(throws: OspreyError.cache(.entryTooLarge(key: "big", cost: 101, limit: 100))) {
            try storage.store("x", forKey: "big", cost: 101)
        }
        #expect(storage.value(forKey: "big") == nil)
        try storage.store("ok", forKey: "fits", cost: 100)
        #expect(storage.value(forKey: "fits") == "ok")
    }

    @Test func expiresEntriesByTheInjectedClock() throws {
        let clock = TestClock()
        let storage = makeStorage(clock: clock, extending: .none)
        try storage.store("default", forKey: "d", cost: 1)
        try storage.store("short", forKey: "s", cost: 1, expiration: .seconds(10))
        try storage.store("forever", forKey: "n", cost: 1, expiration: .never)
        try storage.store("dated", forKey: "t", cost: 1, expiration: .date(clock.now.addingTimeInterval(1_000)))
        try storage.store("days", forKey: "y", cost: 1, expiration: .days(1))
        try storage.store("gone", forKey: "e", cost: 1, expiration: .expired)
        #expect(!storage.isCached(forKey: "e"))
        #expect(storage.count == 5)
        clock.advance(by: 11)
        #expect(storage.value(forKey: "s") == nil)
        #expect(storage.value(forKey: "d") == "default")
        clock.advance(by: 300)
        #expect(storage.removeExpired() == ["d"])
        clock.advance(by: 1_000)
        #expect(storage.value(forKey: "t") == nil)
        clock.advance(by: 86_400)
        #expect(storage.value(forKey: "y") == nil)
        clock.advance(by: 1e9)
        #expect(storage.value(forKey: "n") == "forever")
    }

    @Test func assigningAClockReplacesTheSystemClock() throws {
        let clock = TestClock()
        var config = MemoryStorage.Config(cleanInterval: 0)
        #expect(config.usesSystemClock)
        config.now = clock.function
        #expect(!config.usesSystemClock)
        let storage = MemoryStorage.Backend<String>(config: config)
        try storage.store("v", forKey: "k", cost: 1, expiration: .seconds(10))
        #expect(storage.value(forKey: "k", extendingExpiration: ExpirationExtending.none) == "v")
        clock.advance(by: 11)
        #expect(storage.value(forKey: "k") == nil)
        // The system clock: an entry stored now is alive, one dated a second ago is not stored.
        let system = MemoryStorage.Backend<String>(config: .init(cleanInterval: 0))
        try system.store("v", forKey: "k", cost: 1)
        try system.store("old", forKey: "old", cost: 1, expiration: .date(Date().addingTimeInterval(-1)))
        #expect(system.value(forKey: "k") == "v")
        #expect(!system.isCached(forKey: "old"))
    }

    @Test func readsExtendExpiration() throws {
        let clock = TestClock()
        let extending = makeStorage(clock: clock, expiration: .seconds(100), extending: .cacheTime)
        let fixed = makeStorage(clock: clock, expiration: .seconds(100), extending: .none)
        let replaced = makeStorage(clock: clock, expiration: .seconds(100), extending: .expirationTime(.seconds(1_000)))
        for storage in [extending, fixed, replaced] { try storage.store("v", forKey: "k", cost: 1) }
        clock.advance(by: 90)
        for storage in [extending, fixed, replaced] { #expect(storage.value(forKey: "k") == "v") }
        clock.advance(by: 90)  // 180 s after the store, 90 s after the read
        #expect(extending.value(forKey: "k") == "v")
        #expect(fixed.value(forKey: "k") == nil)
        #expect(replaced.value(forKey: "k") == "v")
        clock.advance(by: 500)
        #expect(extending.value(forKey: "k") == nil)
        #expect(replaced.value(forKey: "k") == "v")
        // A per-read override beats the config.
        try fixed.store("v", forKey: "k", cost: 1)
        clock.advance(by: 90)
        _ = fixed.value(forKey: "k", extendingExpiration: .cacheTime)
        clock.advance(by: 90)
        #expect(fixed.value(forKey: "k") == "v")
    }

    @Test func hitsRestartExpirationOnlyPastHalfLifetime() throws {
        let clock = TestClock()
        let storage = makeStorage(clock: clock, expiration: .seconds(100), extending: .cacheTime)
        try storage.store("v", forKey: "k", cost: 1)
        clock.advance(by: 10)
        #expect(storage.value(forKey: "k") == "v")  // 90 s left of 100: unchanged, still due at 100
        clock.advance(by: 50)
        #expect(storage.value(forKey: "k") == "v")  // 40 s left: restarted, now due at 160
        clock.advance(by: 99)
        #expect(storage.value(forKey: "k") == "v")  // at 159; 1 s left: restarted, due at 259
        clock.advance(by: 99)
        #expect(storage.isCached(forKey: "k"))  // at 258
        clock.advance(by: 1)
        #expect(!storage.isCached(forKey: "k"))
    }

    @Test func trimToCostAndCount() throws {
        let storage = makeStorage()
        for i in 0..<10 { try storage.store("\(i)", forKey: "\(i)", cost: 10) }
        #expect(storage.trim(toCost: 55) == 5)
        #expect(storage.totalCost == 50)
        #expect(storage.keys == ["9", "8", "7", "6", "5"])
        #expect(storage.trim(toCount: 2) == 3)
        #expect(storage.keys == ["9", "8"])
    }

    @Test func sweepDoesNotKeepTheStorageAlive() {
        var storage: MemoryStorage.Backend<String>? = MemoryStorage.Backend(config: .init(cleanInterval: 0.5))
        weak let weakStorage = storage
        #expect(weakStorage != nil)
        storage = nil
        #expect(weakStorage == nil)
    }

    @Test func concurrentReadersAndWriters() async throws {
        let storage = MemoryStorage.Backend<Int>(config: .init(totalCostLimit: 500, entryCostLimitRatio: 1, cleanInterval: 0))
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for i in 0..<2_000 {
                        let key = "k\((i * 7 + task) % 300)"
                        if i % 3 == 0 {
                            try? storage.store(i, forKey: key, cost: 1 + i % 5)
                        } else if i % 97 == 0 {
                            storage.remove(forKey: key)
                        } else {
                            _ = storage.value(forKey: key)
                        }
                    }
                }
            }
        }
        #expect(storage.totalCost <= 500)
        // The cost total matches the entries that remain.
        var sum = 0
        for key in storage.keys { if storage.value(forKey: key) != nil { sum += 1 } }
        #expect(sum == storage.count)
    }

    @Test func imagesChargeTheirDecodedBytes() throws {
        let image = try Image(data: TestImages.data("hopper.png"))
        let storage = MemoryStorage.Backend<Image>(config: .init(entryCostLimitRatio: 1, cleanInterval: 0))
        try storage.store(image, forKey: "hopper", cost: image.cacheCost)
        #expect(storage.totalCost == image.cost)
        #expect(image.cost >= image.width * image.height * 3)
    }
}
