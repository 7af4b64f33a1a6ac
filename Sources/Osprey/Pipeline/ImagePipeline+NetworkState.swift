import Foundation

/// What the pipeline knows of the network and of power saving, as the program tells it
/// (``ImagePipeline/handleNetworkChange(available:metered:)``, ``ImagePipeline/handlePowerSaver(_:)``),
/// and the work that waits for the network to come back.
final class NetworkState: Sendable {
    private struct State {
        var available = true
        var metered = false
        var powerSaver = false
        /// Run once, when the network is next available.
        var waiters: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    /// Whether the network is available (until told otherwise: yes).
    var isAvailable: Bool { state.withLock { $0.available } }

    /// Whether data is to be saved: the network is metered or the system saves power.
    var savesData: Bool { state.withLock { $0.metered || $0.powerSaver } }

    /// Whether new prefetches wait: the network is unavailable or metered, or the system saves power.
    var pausesPrefetching: Bool { state.withLock { !$0.available || $0.metered || $0.powerSaver } }

    /// Records the network's state; returns the waiters to run (all of them, when it became available).
    func setNetwork(available: Bool, metered: Bool) -> [@Sendable () -> Void] {
        state.withLock { state in
            state.metered = metered
            let cameBack = available && !state.available
            state.available = available
            guard cameBack else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
    }

    /// Records whether the system saves power.
    func setPowerSaver(_ enabled: Bool) {
        state.withLock { $0.powerSaver = enabled }
    }

    /// Runs `body` when the network is next available: now (on this thread) when it is.
    func whenAvailable(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if !state.available { state.waiters.append(body) }
            return state.available
        }
        if now { body() }
    }
}

extension ImagePipeline {
    /// Tells the pipeline what the network is like, for programs that learn it themselves
    /// (OspreyGTK wires GIO's `GNetworkMonitor` to it). Until called: available, not metered.
    ///
    /// While `available` is `false`, a request for a network source whose image (or original)
    /// is cached is answered from the cache at once, even from an expired disk entry (which stays
    /// on disk, its expiration not extended, until it is read or cleaned online), and one that
    /// would have to download fails at once with ``OspreyError/DownloadReason/offline(url:)``
    /// without connecting; a download that fails to connect meanwhile fails with that reason too.
    /// ``CachePolicy/reload`` and ``CachePolicy/memoryOrLoad`` read every cache first, as
    /// ``CachePolicy/useCached`` does: a user offline sees the copy they have rather than an
    /// error (the result's ``ImageResult/cacheType`` says it came from a cache). Revalidations
    /// (``CachePolicy/revalidate``) are not tried: the cached image is the answer. A widget whose
    /// request failed so (`setImage`) loads it again by itself when the network comes back, and
    /// every ``ImagePrefetcher`` of this pipeline waits for it.
    ///
    /// While `metered` is `true`, prefetchers start nothing new (running ones finish) and resume
    /// after; a request with ``RequestOption/lowDataSource(_:)`` loads that source instead.
    /// Safe to call from any thread.
    public func handleNetworkChange(available: Bool, metered: Bool) {
        let waiters = networkState.setNetwork(available: available, metered: metered)
        waiters.forEach { $0() }
        resumePrefetchers()
    }

    /// Tells the pipeline whether the system saves power (OspreyGTK wires GIO's
    /// `GPowerProfileMonitor` to it, and pauses animations too). Until called: `false`. While
    /// `enabled`, prefetchers start nothing new and resume after, and requests with
    /// ``RequestOption/lowDataSource(_:)`` load that source, as on a metered network
    /// (``handleNetworkChange(available:metered:)``). Safe to call from any thread.
    public func handlePowerSaver(_ enabled: Bool) {
        networkState.setPowerSaver(enabled)
        resumePrefetchers()
    }

    /// Whether the network is available, as last told (``handleNetworkChange(available:metered:)``).
    package var isNetworkAvailable: Bool { networkState.isAvailable }

    /// Whether the pipeline saves data: metered network or power saving.
    package var savesData: Bool { networkState.savesData }

    /// Whether prefetchers hold new starts back: memory pressure, no or a metered network, power saving.
    package var pausesPrefetching: Bool { memoryPressure != .normal || networkState.pausesPrefetching }

    /// Runs `body` when the network is next available (now, on this thread, when it is): what a
    /// widget whose load failed offline reloads with.
    package func whenNetworkAvailable(_ body: @escaping @Sendable () -> Void) {
        networkState.whenAvailable(body)
    }

    /// Starts what the prefetchers hold, unless something still pauses them.
    private func resumePrefetchers() {
        guard !pausesPrefetching else { return }
        memoryPressureState.prefetchers.forEach { $0.resumeAfterMemoryPressure() }
    }

    /// The source a request with `options` loads: its ``RequestOption/lowDataSource(_:)`` while
    /// the pipeline saves data, else `source`.
    func dataSavingSource(_ source: ImageSource, _ options: ResolvedOptions) -> ImageSource {
        guard let low = options.lowDataSource, networkState.savesData else { return source }
        return low
    }

    /// Whether disk reads for `source` answer with expired entries too: a network source while the
    /// network is unavailable, when nothing could replace them (they stay on disk, unextended).
    /// (`source` is read only while the network is unavailable.)
    func servesExpired(_ source: @autoclosure () -> ImageSource) -> Bool {
        guard !networkState.isAvailable, case .network = source() else { return false }
        return true
    }

    /// `options` for a request of `source`: while the network is unavailable, a network source's
    /// ``CachePolicy/reload`` or ``CachePolicy/memoryOrLoad`` reads every cache first, as
    /// ``CachePolicy/useCached`` does (a load could only fail); `options` otherwise.
    func offlinePolicy(_ options: ResolvedOptions, _ source: ImageSource) -> ResolvedOptions {
        guard !options.cachePolicy.readsDisk, servesExpired(source) else { return options }
        return options.merging([.cachePolicy(.useCached)])
    }

    /// The failure of a download of `source` that is not to be tried: offline, for a network source
    /// while the network is unavailable; `nil` otherwise.
    func offlineFailure(_ source: ImageSource) -> OspreyError? {
        guard !networkState.isAvailable, case .network(let resource) = source else { return nil }
        return .download(.offline(url: resource.url))
    }

    /// `error` of a download of `source`, a failed transport made ``OspreyError/DownloadReason/offline(url:)``
    /// when the network is unavailable by then.
    func offlineMapped(_ error: OspreyError, _ source: ImageSource) -> OspreyError {
        guard case .download(.transport(let url, _)) = error, !networkState.isAvailable else { return error }
        return .download(.offline(url: url))
    }
}

extension OspreyError {
    /// Whether the request failed because the network is unavailable
    /// (``OspreyError/DownloadReason/offline(url:)``, for the source or every alternative that failed so).
    package var isOffline: Bool {
        switch self {
        case .download(.offline): true
        case .pipeline(.allSourcesFailed(_, let errors)): errors.contains { $0.isOffline }
        default: false
        }
    }
}
