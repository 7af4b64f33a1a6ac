import COspreyVips

/// How short of memory the system is, as a program without GIO's `GMemoryMonitor` learns it
/// (its own `/proc/pressure/memory` or cgroup watcher, a signal): the level
/// ``ImagePipeline/handleMemoryPressure(_:)`` sheds by.
public enum MemoryPressureLevel: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Memory is fine: prefetching runs (resumed after a warning).
    case normal
    /// Memory is short (GIO's `low` and `medium`): the memory cache is trimmed to
    /// a quarter of its cost and prefetching pauses.
    case warning
    /// Memory is critically short (GIO's `critical`): the memory cache is emptied, keeping only
    /// the images in use (a widget or a caller holds its image itself), and prefetching pauses.
    case critical

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The pipeline's memory-pressure level and the prefetchers that pause on it.
final class MemoryPressureState: Sendable {
    /// A prefetcher, held weakly: a prefetcher that is gone no longer needs resuming.
    private struct Listener: @unchecked Sendable {
        // @unchecked: the reference is only read (a weak load is atomic) and ImagePrefetcher is
        // Sendable itself.
        weak var prefetcher: ImagePrefetcher?
    }

    private let state = Locked<(level: MemoryPressureLevel, listeners: [Listener])>((.normal, []))

    var level: MemoryPressureLevel { state.withLock { $0.level } }

    /// Registers `prefetcher` to be resumed when the level goes back to normal.
    func register(_ prefetcher: ImagePrefetcher) {
        state.withLock { state in
            state.listeners.removeAll { $0.prefetcher == nil }
            state.listeners.append(Listener(prefetcher: prefetcher))
        }
    }

    /// The prefetchers registered and still alive.
    var prefetchers: [ImagePrefetcher] { state.withLock { $0.listeners.compactMap(\.prefetcher) } }

    /// Sets the level; returns the prefetchers to resume (those registered, when it fell to normal).
    func set(_ level: MemoryPressureLevel) -> [ImagePrefetcher] {
        state.withLock { state in
            let resumes = state.level != .normal && level == .normal
            state.level = level
            return resumes ? state.listeners.compactMap(\.prefetcher) : []
        }
    }
}

extension ImagePipeline {
    /// The share of the memory cache's cost a ``MemoryPressureLevel/warning`` keeps: a quarter.
    package static let warningCacheFraction = 0.25

    /// The level last given to ``handleMemoryPressure(_:)``; ``MemoryPressureLevel/normal`` until then.
    package var memoryPressure: MemoryPressureLevel { memoryPressureState.level }

    /// Sheds memory by `level`, for programs that learn of memory pressure themselves (OspreyGTK
    /// wires GIO's `GMemoryMonitor` to it):
    /// - ``MemoryPressureLevel/warning``: the memory cache keeps a quarter of its
    ///   cost (the least recently used entries go first) and every ``ImagePrefetcher`` of this
    ///   pipeline stops starting sources; running ones finish.
    /// - ``MemoryPressureLevel/critical``: the memory cache is emptied (images in use stay
    ///   alive with whoever holds them), the allocator's free memory goes back to the system
    ///   (glibc's `malloc_trim`, so the process's RSS drops), and prefetching pauses.
    /// - ``MemoryPressureLevel/normal``: prefetching resumes; the cache refills as it is used.
    ///
    /// Disk caches are left alone. Safe to call from any thread.
    public func handleMemoryPressure(_ level: MemoryPressureLevel) {
        let resumed = memoryPressureState.set(level)
        let memory = configuration.cache.memoryStorage
        switch level {
        case .normal: break
        case .warning: _ = memory.trim(toCost: Int(Double(memory.totalCost) * Self.warningCacheFraction))
        case .critical:
            memory.removeAll()
            _ = osprey_malloc_trim()
        }
        resumed.forEach { $0.resumeAfterMemoryPressure() }
    }
}
