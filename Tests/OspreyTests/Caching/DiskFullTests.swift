import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// A full disk, for real: a 64 KiB tmpfs mounted over a temporary directory. Mounting needs root
/// (CI and the development machines run as root); elsewhere the test has nothing to check and
/// returns early, saying so.
@Suite("Disk full", .timeLimit(.minutes(5)))
struct DiskFullTests {
    static func run(_ arguments: [String]) -> Bool {
        (try? ProcessRun.run(URL(fileURLWithPath: "/bin/" + arguments[0]), Array(arguments.dropFirst()), within: .seconds(60)))?.status == 0
    }

    /// Runs `body` with a 64 KiB tmpfs mounted (with `options`, e.g. `ro`) over a temporary
    /// directory; does nothing, saying so, where mounting is not permitted.
    static func withTmpfs(_ options: String, _ body: (URL) async throws -> Void) async throws {
        let directory = TemporaryDirectory("tmpfs")
        let mountPoint = directory.url.appendingPathComponent("mnt")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard run(["mount", "-t", "tmpfs", "-o", options + (options.isEmpty ? "" : ",") + "size=64k", "tmpfs", mountPoint.path]) else {
            print("DiskFullTests: cannot mount a tmpfs here (not root?); nothing to check")
            return
        }
        defer { _ = run(["umount", mountPoint.path]) }
        try await body(mountPoint)
    }

    @Test("a full disk gives a typed error, keeps the memory entry and leaves no partial file")
    func diskFull() async throws {
        try await Self.withTmpfs("") { mountPoint in
            let cache = ImageCache(name: "full", diskConfig: DiskStorage.Config(name: "full", directory: mountPoint.appendingPathComponent("cache")))
            let image = try TestData.image("hopper.jpg")
            let small = try TestData.data("hopper.jpg")
            let big = small + Data(repeating: 0x55, count: 200_000)

            let fits = await cache.store(image, original: small, forKey: "small")
            #expect((try? fits.diskCacheResult.get()) != nil, "a small entry fits")

            let result = await cache.store(image, original: big, forKey: "big")
            #expect((try? result.memoryCacheResult.get()) != nil, "the memory level keeps the image")
            guard case .failure(.cache(let reason)) = result.diskCacheResult else {
                Issue.record("expected a typed cache error, got \(result.diskCacheResult)")
                return
            }
            #expect("\(OspreyError.cache(reason))".contains("big") || "\(OspreyError.cache(reason))".contains("cache"))
            #expect(cache.retrieveImageInMemoryCache(forKey: "big") != nil)
            #expect(!cache.diskStorage.isCached(forKey: "big"))
            await cache.diskStorage.waitForPendingWork()
            // No temporary or torn file is left behind, and the earlier entry is intact.
            let temps = (try? FileManager.default.contentsOfDirectory(atPath: mountPoint.appendingPathComponent("cache/.tmp").path)) ?? []
            #expect(temps.isEmpty)
            #expect(await cache.diskStorage.value(forKey: "small") == small)
        }
    }

    @Test("a read-only file system gives a typed error even for root, and the memory entry stays")
    func readOnly() async throws {
        try await Self.withTmpfs("ro") { mountPoint in
            let cache = ImageCache(name: "ro", diskConfig: DiskStorage.Config(name: "ro", directory: mountPoint.appendingPathComponent("cache")))
            let image = try TestData.image("hopper.jpg")
            let result = await cache.store(image, original: try TestData.data("hopper.jpg"), forKey: "ro")
            #expect((try? result.memoryCacheResult.get()) != nil)
            guard case .failure(.cache) = result.diskCacheResult else {
                Issue.record("expected a typed cache error, got \(result.diskCacheResult)")
                return
            }
            #expect(try await cache.retrieveImage(forKey: "ro").cacheType == .memory)
        }
    }
}
