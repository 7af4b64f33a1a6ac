import CGtk
import Osprey

/// GIO's system monitors wired to pipelines and animations (connected once, on the main thread):
/// `GMemoryMonitor`'s `low-memory-warning` to `ImagePipeline.handleMemoryPressure(_:)` (GIO's
/// `low` and `medium` levels as a warning, `critical` as critical, which also trims the buffer of
/// each animation (``AnimationPlayer``, ``AnimatedPaintable``) to the frame it shows and keeps it
/// at one frame while the pressure lasts), `GNetworkMonitor`'s `network-changed` and
/// `network-metered` to `handleNetworkChange(available:metered:)`, `GPowerProfileMonitor`'s
/// `power-saver-enabled` to `handlePowerSaver(_:)` and to the animations, which pause while it is on.
///
/// GIO tells no end of memory pressure: ``memoryCalmSeconds`` after the last warning the pipelines
/// are told `normal` again (their prefetchers resume).
@MainActor
enum SystemMonitors {
    /// Seconds after the last low-memory warning when the pressure is taken to be over: 30.
    static let memoryCalmSeconds: guint = 30

    private struct Watched {
        weak var pipeline: ImagePipeline?
    }

    private static var pipelines: [Watched] = []
    private static var animations: [WeakAnimation] = []
    private static var connected = false
    private static var calmTimer: guint = 0
    /// Whether the system saves power, as `GPowerProfileMonitor` last said.
    private(set) static var powerSaving = false
    private static var network: OpaquePointer?
    private static var power: OpaquePointer?

    /// Wires the monitors to `pipeline` (once per pipeline; the pipeline is held weakly) and tells
    /// it the network's and power's state now.
    static func watch(_ pipeline: ImagePipeline) {
        pipelines.removeAll { $0.pipeline == nil }
        guard !pipelines.contains(where: { $0.pipeline === pipeline }) else { return }
        pipelines.append(Watched(pipeline: pipeline))
        connect()
        if let monitor = network {
            pipeline.handleNetworkChange(
                available: g_network_monitor_get_network_available(monitor) != 0,
                metered: g_network_monitor_get_network_metered(monitor) != 0)
        }
        if powerSaving { pipeline.handlePowerSaver(true) }
    }

    /// Registers `animation` to pause while the system saves power and to keep one frame at a
    /// critical warning; returns whether the system saves power now.
    static func register(_ animation: any SystemAwareAnimation) -> Bool {
        animations.removeAll { $0.value == nil }
        animations.append(WeakAnimation(value: animation))
        return powerSaving
    }

    private static var watchedPipelines: [ImagePipeline] { pipelines.compactMap(\.pipeline) }

    /// Whether a watched pipeline is at ``Osprey/MemoryPressureLevel/critical``: from a critical
    /// warning until a later lower one, the calm after it (``memoryCalmSeconds``) or the program's
    /// own `handleMemoryPressure(.normal)`. Animations then keep one frame buffered.
    static var memoryIsCritical: Bool { pipelines.contains { $0.pipeline?.memoryPressure == .critical } }
    private static var liveAnimations: [any SystemAwareAnimation] { animations.compactMap(\.value) }

    private static func connect() {
        guard !connected else { return }
        connected = true
        if let memory = g_memory_monitor_dup_default() {
            let handler: @convention(c) (UnsafeMutableRawPointer?, GMemoryMonitorWarningLevel, UnsafeMutableRawPointer?) -> Void = {
                _, level, _ in
                MainActor.assumeIsolated { SystemMonitors.lowMemory(level) }
            }
            GObjectSupport.connect(UnsafeMutableRawPointer(memory), "low-memory-warning", unsafeBitCast(handler, to: GCallback.self), nil)
        }
        if let monitor = g_network_monitor_get_default() {
            network = monitor
            let changed: @convention(c) (UnsafeMutableRawPointer?, gboolean, UnsafeMutableRawPointer?) -> Void = { _, _, _ in
                MainActor.assumeIsolated { SystemMonitors.networkChanged() }
            }
            let metered: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, _, _ in
                MainActor.assumeIsolated { SystemMonitors.networkChanged() }
            }
            GObjectSupport.connect(UnsafeMutableRawPointer(monitor), "network-changed", unsafeBitCast(changed, to: GCallback.self), nil)
            GObjectSupport.connect(UnsafeMutableRawPointer(monitor), "notify::network-metered", unsafeBitCast(metered, to: GCallback.self), nil)
        }
        if let monitor = g_power_profile_monitor_dup_default() {
            power = monitor
            powerSaving = g_power_profile_monitor_get_power_saver_enabled(monitor) != 0
            let handler: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, _, _ in
                MainActor.assumeIsolated { SystemMonitors.powerChanged() }
            }
            GObjectSupport.connect(
                UnsafeMutableRawPointer(monitor), "notify::power-saver-enabled", unsafeBitCast(handler, to: GCallback.self), nil)
        }
    }

    /// A `low-memory-warning` at GIO's `level` (50 low, 100 medium, 255 critical).
    static func lowMemory(_ level: GMemoryMonitorWarningLevel) {
        let critical = level.rawValue >= G_MEMORY_MONITOR_WARNING_LEVEL_CRITICAL.rawValue
        watchedPipelines.forEach { $0.handleMemoryPressure(critical ? .critical : .warning) }
        if critical { liveAnimations.forEach { $0.keepShownFrameOnly() } }
        if calmTimer != 0 { g_source_remove(calmTimer) }
        calmTimer = g_timeout_add_seconds(
            memoryCalmSeconds,
            { _ in
                MainActor.assumeIsolated {
                    SystemMonitors.calmTimer = 0
                    SystemMonitors.endMemoryPressure()
                }
                return 0  // G_SOURCE_REMOVE
            }, nil)
    }

    /// The pressure is over: every watched pipeline is told `normal` (its prefetchers resume, its
    /// animations buffer ahead again). What the calm after the last warning does; tests call it
    /// instead of waiting ``memoryCalmSeconds``.
    static func endMemoryPressure() {
        if calmTimer != 0 { g_source_remove(calmTimer) }
        calmTimer = 0
        watchedPipelines.forEach { $0.handleMemoryPressure(.normal) }
    }

    private static func networkChanged() {
        guard let monitor = network else { return }
        let available = g_network_monitor_get_network_available(monitor) != 0
        let metered = g_network_monitor_get_network_metered(monitor) != 0
        watchedPipelines.forEach { $0.handleNetworkChange(available: available, metered: metered) }
    }

    private static func powerChanged() {
        guard let power else { return }
        powerSaving = g_power_profile_monitor_get_power_saver_enabled(power) != 0
        watchedPipelines.forEach { $0.handlePowerSaver(powerSaving) }
        liveAnimations.forEach { $0.powerSaverChanged(powerSaving) }
    }
}

/// An animation that follows the system (``AnimationPlayer``, ``AnimatedPaintable``): it pauses
/// while the system saves power and keeps only its shown frame at a critical memory warning.
@MainActor
protocol SystemAwareAnimation: AnyObject {
    /// Pauses while `enabled`, and plays again after if the pause was the power saver's.
    func powerSaverChanged(_ enabled: Bool)
    /// Releases every buffered frame but the one shown.
    func keepShownFrameOnly()
}

extension AnimationFrameBuffer {
    /// Moves the window to start at frame `index` (``prefetch(from:limit:)``): one frame while
    /// memory is critically short (``SystemMonitors/memoryIsCritical``), ``capacity`` otherwise.
    @MainActor
    func prefetchWithinMemory(from index: Int) {
        prefetch(from: index, limit: SystemMonitors.memoryIsCritical ? 1 : nil)
    }
}

/// A weak reference to a registered animation (``WeakReference`` takes no existential: `any` of a
/// class-bound protocol is not a class type).
private struct WeakAnimation {
    weak var value: (any SystemAwareAnimation)?
}

extension AnimationPlayer: SystemAwareAnimation {}
