import CGtk
import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey
@testable import OspreyGTK

/// GIO's monitors wired to a pipeline (`OspreyApplication.monitorSystem(for:)`), driven by the real
/// mechanisms: `low-memory-warning` emitted on the default `GMemoryMonitor`, and the default route
/// of the network namespace the test runs in removed and added back, which `GNetworkMonitor`'s
/// netlink backend reports. The network test runs only where changing routes is safe: as root in
/// a namespace of its own, which `scripts/test.sh` makes (`unshare -n`) and marks with
/// `OSPREY_NETNS=1`. In the GTK targets' serialized suite: a warning reaches every animation of
/// the process, which must not be another test's.
extension GTKTargetTests {
    /// A two-frame GIF served by `origin` as `name`, loaded through `pipeline` into a picture in a
    /// new window and playing in a loop: the window (destroyed by the caller) and the player.
    static func playingGIF(
        _ name: String, origin: LoopbackOrigin, pipeline: ImagePipeline
    ) async throws -> (UnsafeMutablePointer<GtkWidget>, AnimationPlayer) {
        let gif = GTKTargetTests.twoFrameGIF
        origin.setBody(name, gif, cut: gif.count)
        origin.openGate(name)
        let (picture, window) = await GTKTargetTests.pictureInWindow()
        picture.animationSettings = AnimationSettings(autoplay: true, loopCount: 0)
        let loaded = FailureBox()
        picture.osprey.setImage(
            with: .url(origin.url("/gated/\(name)")), settings: TargetSettings(sizedToTarget: false), pipeline: pipeline,
            completion: { _ in loaded.done = true })
        await GTKHarness.pump("the animation to load") { loaded.done }
        return (window, try #require(picture.animation))
    }

    @Test("GIO's low-memory-warning sheds the pipeline's memory cache: a low one trims it, a critical one empties it")
    func gioLowMemoryWarning() async throws {
        try await GTKHarness.withOrigin("gtk-memory") { origin, pipeline in
            for item in 0..<24 { _ = try await pipeline.image(for: origin.itemURL(item)) }
            let memory = pipeline.configuration.cache.memoryStorage
            #expect(memory.count == 24)
            OspreyApplication.monitorSystem(for: pipeline)
            let monitor = try #require(g_memory_monitor_dup_default())
            defer { g_object_unref(UnsafeMutableRawPointer(monitor)) }
            // 32 photo-sized decoded images (1024x1024 RGBA, 4 MiB each) besides: what RSS can give back.
            for index in 0..<32 {
                let image = try Image(rgba: [UInt8](repeating: UInt8(index), count: 1024 * 1024 * 4), width: 1024, height: 1024)
                try memory.store(image, forKey: "photo-\(index)", cost: image.cost)
            }
            let entries = memory.count
            let before = Self.residentBytes()
            osprey_emit_low_memory_warning(monitor, G_MEMORY_MONITOR_WARNING_LEVEL_LOW)
            #expect(pipeline.memoryPressure == .warning && memory.count < entries && memory.count > 0)
            osprey_emit_low_memory_warning(monitor, G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL)
            #expect(pipeline.memoryPressure == .critical && memory.count == 0 && memory.totalCost == 0)
            // Reported, not asserted: what the process gives back depends on the allocator.
            print(
                "gioLowMemoryWarning: RSS \(before >> 20) MiB with \(entries) images in memory, \(Self.residentBytes() >> 20) MiB after the critical warning"
            )
            // Every watched pipeline back to normal, not this one alone: later tests' animations buffer ahead.
            SystemMonitors.endMemoryPressure()
            #expect(pipeline.memoryPressure == .normal)
        }
    }

    @Test(
        "a critical warning leaves a playing animation one buffered frame while it lasts (it plays on), then it buffers ahead again; power saving pauses it and plays it again after, not one the user paused"
    )
    func gioAnimationsShed() async throws {
        try await GTKHarness.withOrigin("gtk-animation-shed") { origin, pipeline in
            let (window, player) = try await Self.playingGIF("shed.gif", origin: origin, pipeline: pipeline)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            await GTKHarness.pump("both frames buffered") { player.buffer.count == 2 }
            OspreyApplication.monitorSystem(for: pipeline)
            let monitor = try #require(g_memory_monitor_dup_default())
            defer { g_object_unref(UnsafeMutableRawPointer(monitor)) }
            osprey_emit_low_memory_warning(monitor, G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL)
            #expect(player.buffer.count <= 1, "the shown frame only")
            // It plays on through both frames, never buffering more than one while memory is critical.
            var changes = 0, changedAt = player.lastChangeTime, most = player.buffer.count
            await GTKHarness.pump("three frame changes while memory is critical") {
                most = max(most, player.buffer.count)
                if player.lastChangeTime != changedAt { (changes, changedAt) = (changes + 1, player.lastChangeTime) }
                return changes >= 3
            }
            #expect(changes >= 3 && most <= 1, "\(changes) frame changes, at most \(most) frames buffered")
            // A lower warning ends the critical shedding: the buffer fills its window again.
            osprey_emit_low_memory_warning(monitor, G_MEMORY_MONITOR_WARNING_LEVEL_LOW)
            await GTKHarness.pump("both frames buffered again after the critical level") { player.buffer.count == 2 }
            #expect(player.buffer.count == 2)
            SystemMonitors.endMemoryPressure()

            #expect(player.isPlaying)
            player.powerSaverChanged(true)
            #expect(!player.isPlaying)
            player.powerSaverChanged(false)
            #expect(player.isPlaying)
            player.pause()
            player.powerSaverChanged(true)
            player.powerSaverChanged(false)
            #expect(!player.isPlaying, "paused by the user: stays paused")
        }
    }

    @Test(
        "offline (no default route), a picture's load fails at once with nothing sent; when the route comes back it shows its image by itself",
        .enabled(if: ProcessInfo.processInfo.environment["OSPREY_NETNS"] == "1" && getuid() == 0))
    func gioNetworkComesBack() async throws {
        try GTKHarness.start()
        _ = try await Self.ip("route", "del", "default")  // absent already in a fresh namespace
        try await GTKHarness.withOrigin("gtk-network") { origin, pipeline in
            OspreyApplication.monitorSystem(for: pipeline)
            await GTKHarness.pump("GNetworkMonitor to say the network is unavailable") { !pipeline.isNetworkAvailable }
            let (picture, window) = await GTKTargetTests.pictureInWindow()
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let failure = FailureBox()
            let settings = TargetSettings<OspreyPicture>(sizedToTarget: false)
            picture.osprey.setImage(
                with: .url(origin.itemURL(5)), settings: settings, pipeline: pipeline,
                completion: { result in
                    if case .failure(let error) = result { failure.error = error }
                })
            await GTKHarness.pump("the offline failure") { failure.error != nil }
            #expect(failure.error == .download(.offline(url: origin.itemURL(5))))
            #expect(origin.hits("/color/5.png") == 0, "nothing was sent offline")

            let added = try await Self.ip("route", "add", "default", "dev", "lo")
            #expect(added == 0)
            await GTKHarness.pump("the picture to show item 5 after the route came back") {
                GTKHarness.close(GTKHarness.centrePixel(of: picture.widget, in: window), ColorImages.color(5))
            }
            #expect(pipeline.isNetworkAvailable && origin.hits("/color/5.png") == 1)
        }
    }

    @Test(
        "power-saver set on a power-profiles service (a private system bus) reaches GPowerProfileMonitor: prefetching and playing animations (a picture's and a plain GtkPicture's paintable) pause, and resume when the profile is balanced again",
        .enabled(if: ProcessInfo.processInfo.environment["OSPREY_PRIVATE_SYSTEM_BUS"] == "1"))
    func gioPowerSaverFromDBus() async throws {
        try GTKHarness.start()
        // Before GIO's first use of the system bus in this process (scripts/test.sh runs this test alone).
        let bus = try await PrivateSystemBus.start()
        do {
            try await GTKHarness.withOrigin("gtk-power") { origin, pipeline in
                OspreyApplication.monitorSystem(for: pipeline)
                // The network is not under test: in a namespace without a default route GNetworkMonitor
                // says it is unavailable, which would hold the loopback loads and prefetches.
                pipeline.handleNetworkChange(available: true, metered: false)
                let (window, player) = try await Self.playingGIF("power.gif", origin: origin, pipeline: pipeline)
                defer { gtk_window_destroy(GtkWindowPointer(window)) }
                // The same animation as a GdkPaintable in a plain GtkPicture.
                let texture = try #require(Texture(image: try Image(data: GTKTargetTests.twoFrameGIF)))
                let paintable = try #require(texture.makeAnimatedPaintable(settings: AnimationSettings(loopCount: 0)))
                let plain = gtk_picture_new_for_paintable(paintable)!
                defer { g_object_unref(UnsafeMutableRawPointer(paintable)) }
                let plainWindow = await GTKHarness.window(plain, width: 80, height: 60)
                defer { gtk_window_destroy(GtkWindowPointer(plainWindow)) }
                let animated = try #require(AnimatedPaintable.player(paintable))
                #expect(player.isPlaying && animated.isPlaying && !pipeline.pausesPrefetching)

                try await bus.setProfile("power-saver")
                await GTKHarness.pump("GPowerProfileMonitor to report power-saver") { !player.isPlaying }
                #expect(!player.isPlaying && !animated.isPlaying && pipeline.pausesPrefetching && pipeline.savesData)
                let prefetcher = ImagePrefetcher(pipeline: pipeline)
                let urls = (0..<4).map(origin.itemURL)
                prefetcher.startPrefetching(with: urls)
                await GTKHarness.pump("the prefetches to be queued") { prefetcher.isPrefetching }
                #expect((0..<4).allSatisfy { origin.hits("/color/\($0).png") == 0 }, "nothing prefetched while saving power")

                try await bus.setProfile("balanced")
                await GTKHarness.pump("the animation to play and the prefetches to finish after power-saver ended") {
                    player.isPlaying && !prefetcher.isPrefetching
                }
                #expect(player.isPlaying && animated.isPlaying && !pipeline.pausesPrefetching)
                #expect((0..<4).allSatisfy { origin.hits("/color/\($0).png") == 1 }, "each queued image prefetched once")
            }
        } catch {
            await bus.stop()
            throw error
        }
        await bus.stop()
    }

    /// Runs `ip ARGUMENTS` (iproute2); returns its exit status.
    private nonisolated static func ip(_ arguments: String...) async throws -> Int32 {
        let process = Process()
        let paths = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"]
        process.executableURL = URL(fileURLWithPath: paths.first(where: FileManager.default.isExecutableFile(atPath:)) ?? paths[0])
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        return try await process.exitStatus(within: .seconds(30), "ip \(arguments.joined(separator: " "))")
    }

    /// The process's resident set size, from `/proc/self/statm`.
    private static func residentBytes() -> Int {
        let fields = ((try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "").split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

/// The error a main-actor completion reported.
@MainActor
private final class FailureBox {
    var error: OspreyError?
    var done = false
}
