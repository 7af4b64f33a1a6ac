import Foundation
import Testing

@testable import Osprey

@Suite("ImageCache", .timeLimit(.minutes(5)))
struct ImageCacheTests {
    func makeCache(
        _ dir: borrowing TemporaryDirectory, clock: TestClock = TestClock(),
        memoryLimit: Int = 512 << 20, diskDirectory: URL? = nil
    ) async -> ImageCache {
        let cache = ImageCache(
            memoryStorage: .init(config: .init(totalCostLimit: memoryLimit, entryCostLimitRatio: 1, cleanInterval: 0, now: clock.function)),
            diskStorage: .init(config: .init(directory: diskDirectory ?? dir.url.appendingPathComponent("disk"), now: clock.function)))
        await cache.diskStorage.waitForPendingWork()
        return cache
    }

    func rgbaImage(alpha: UInt8) throws -> Image {
        try Image(rgba: [UInt8](repeating: 0, count: 0) + (0..<(8 * 8)).flatMap { i in [UInt8(i), 100, 200, alpha] }, width: 8, height: 8)
    }

    @Test func computedKeys() {
        #expect(ImageCache.computedKey("https://x/a.jpg", processorIdentifier: "") == "https://x/a.jpg")
        #expect(ImageCache.computedKey("https://x/a.jpg", processorIdentifier: "resize(10x10)") == "https://x/a.jpg@resize(10x10)")
    }

    @Test func memoryThenDiskThenPromotion() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir)
        let original = try TestImages.data("hopper.jpg")
        let image = try Image(data: original)
        let result = await cache.store(image, original: original, forKey: "hopper")
        #expect(throws: Never.self) { try result.memoryCacheResult.get() }
        #expect(throws: Never.self) { try result.diskCacheResult.get() }
        #expect(cache.imageCachedType(forKey: "hopper") == .memory)
        #expect(try await cache.retrieveImage(forKey: "hopper").cacheType == .memory)

        cache.clearMemoryCache()
        #expect(cache.imageCachedType(forKey: "hopper") == .disk)
        let fromDisk = try await cache.retrieveImage(forKey: "hopper")
        #expect(fromDisk.cacheType == .disk)
        #expect(fromDisk.image?.width == image.width && fromDisk.image?.height == image.height)
        #expect(cache.imageCachedType(forKey: "hopper") == .memory)  // promoted

        cache.clearMemoryCache()
        let noPromotion = CacheOptions(storeInMemoryAfterDiskHit: false)
        #expect(try await cache.retrieveImage(forKey: "hopper", options: noPromotion).cacheType == .disk)
        #expect(cache.imageCachedType(forKey: "hopper") == .disk)

        #expect(try await cache.retrieveImage(forKey: "other").cacheType == .none)
        #expect(try await cache.retrieveImage(forKey: "hopper", processorIdentifier: "blur(2)").cacheType == .none)
        #expect(await cache.diskStorageSize() == original.count)
    }

    @Test func defaultSerializerKeepsOriginalBytesOrReencodes() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir)
        let jpeg = try TestImages.data("hopper.jpg")
        let image = try Image(data: jpeg)
        // Unprocessed with known original: the bytes as they came.
        await cache.store(image, original: jpeg, forKey: "a")
        #expect(await cache.diskStorage.value(forKey: "a") == jpeg)
        // Processed: re-encoded in the original format.
        await cache.store(image, original: jpeg, forKey: "a", processorIdentifier: "p")
        let processed = try #require(await cache.diskStorage.value(forKey: ImageCache.computedKey("a", processorIdentifier: "p")))
        #expect(processed != jpeg)
        #expect(ImageFormat(sniffing: processed) == .jpeg)
        // No format known: PNG with alpha, JPEG without.
        await cache.store(try rgbaImage(alpha: 128), forKey: "alpha")
        #expect(ImageFormat(sniffing: try #require(await cache.diskStorage.value(forKey: "alpha"))) == .png)
        await cache.store(try rgbaImage(alpha: 255).frame(at: 0)!, forKey: "opaque", processorIdentifier: "x")
        let opaqueFormat = ImageFormat(
            sniffing: try #require(await cache.diskStorage.value(forKey: ImageCache.computedKey("opaque", processorIdentifier: "x"))))
        #expect(opaqueFormat == (try rgbaImage(alpha: 255).hasAlpha ? .png : .jpeg))
        #expect(DefaultCacheSerializer.format(for: try rgbaImage(alpha: 0), originalFormat: nil) == .png)
        #expect(DefaultCacheSerializer.format(for: image, originalFormat: nil) == .jpeg)
        #expect(DefaultCacheSerializer.format(for: image, originalFormat: .bmp) == .jpeg)
        // Round trip through the disk.
        cache.clearMemoryCache()
        let back = try await cache.retrieveImage(forKey: "alpha")
        #expect(back.cacheType == .disk && back.image?.hasAlpha == true && back.image?.width == 8)
    }

    @Test func diskFailureLeavesMemoryIntact() async throws {
        let dir = TemporaryDirectory()
        let blocker = dir.url.appendingPathComponent("blocker")
        try Data([0]).write(to: blocker)
        let cache = await makeCache(dir, diskDirectory: blocker.appendingPathComponent("disk"))
        let image = try Image(data: TestImages.data("hopper.png"))
        let result = await cache.store(image, forKey: "k")
        #expect(throws: Never.self) { try result.memoryCacheResult.get() }
        #expect(throws: OspreyError.self) { try result.diskCacheResult.get() }
        #expect(cache.imageCachedType(forKey: "k") == .memory)
        #expect(try await cache.retrieveImage(forKey: "k").cacheType == .memory)
    }

    @Test func tooLargeForMemoryStillGoesToDisk() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir, memoryLimit: 100)
        let image = try Image(data: TestImages.data("hopper.png"))
        let result = await cache.store(image, forKey: "big")
        #expect(throws: OspreyError.cache(.entryTooLarge(key: "big", cost: image.cost, limit: 100))) { try result.memoryCacheResult.get() }
        #expect(throws: Never.self) { try result.diskCacheResult.get() }
        #expect(cache.imageCachedType(forKey: "big") == .disk)
    }

    @Test func undecodableDiskBytesAreAMissAndRemoved() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir)
        let jpeg = try TestImages.data("hopper.jpg")
        await cache.store(try Image(data: jpeg), original: jpeg, forKey: "k")
        cache.clearMemoryCache()
        // Damaged in place: the broken seal makes it a miss at the disk level.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cache.cachePath(forKey: "k")))
        try handle.write(contentsOf: Data(repeating: 0x42, count: jpeg.count))
        try handle.close()
        #expect(try await cache.retrieveImage(forKey: "k").cacheType == .none)
        #expect(!FileManager.default.fileExists(atPath: cache.cachePath(forKey: "k")))
        #expect(cache.imageCachedType(forKey: "k") == .none)
    }

    @Test func removeAndClear() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir)
        let image = try Image(data: TestImages.data("hopper.png"))
        await cache.store(image, forKey: "a")
        await cache.store(image, forKey: "a", processorIdentifier: "p")
        try await cache.removeImage(forKey: "a", fromDisk: false)
        #expect(cache.imageCachedType(forKey: "a") == .disk)
        try await cache.removeImage(forKey: "a", fromMemory: false)
        #expect(cache.imageCachedType(forKey: "a") == .none)
        #expect(cache.imageCachedType(forKey: "a", processorIdentifier: "p") == .memory)
        try await cache.clearDiskCache()
        cache.clearMemoryCache()
        #expect(!cache.isCached(forKey: "a", processorIdentifier: "p"))
        #expect(await cache.diskStorageSize() == 0)
    }

    @Test func cleanExpiredCacheCleansBothLevels() async throws {
        let clock = TestClock()
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir, clock: clock)
        let image = try Image(data: TestImages.data("hopper.png"))
        await cache.store(image, forKey: "short", options: CacheOptions(memoryExpiration: .seconds(10), diskExpiration: .seconds(10)))
        await cache.store(image, forKey: "long")
        clock.advance(by: 11)
        let report = await cache.cleanExpiredCache()
        #expect(report.removed.map(\.key) == ["short"])
        #expect(cache.imageCachedType(forKey: "short") == .none)
        #expect(cache.imageCachedType(forKey: "long") == .memory)
        clock.advance(by: 8 * 86_400)
        await cache.cleanExpiredCache()
        #expect(cache.imageCachedType(forKey: "long") == .none)
    }

    @Test func concurrentStoresAndRetrievals() async throws {
        let dir = TemporaryDirectory()
        let cache = await makeCache(dir, memoryLimit: 600_000)
        let jpeg = try TestImages.data("hopper.jpg")
        let image = try Image(data: jpeg)
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for i in 0..<12 {
                        let key = "img\((i + task) % 6)"
                        if i % 3 == 0 {
                            await cache.store(image, original: jpeg, forKey: key)
                        } else if i % 5 == 0 {
                            cache.clearMemoryCache()
                        } else if let found = try? await cache.retrieveImage(forKey: key).image,
                            found.width != image.width || found.height != image.height
                        {
                            wrong += 1
                        }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(cache.memoryStorage.totalCost <= 600_000)
    }
}
