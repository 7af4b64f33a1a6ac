import Foundation
import OspreyTestSupport
import Synchronization
import Testing

@testable import Osprey

/// Collects values from completion handlers and lets a test await a count of them.
/// Its state is behind Osprey's `Locked` (a pthread mutex the thread sanitizer can see).
final class Collector<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<[Value], Never>)] = []
    }

    private let state = Locked(State())

    func append(_ value: Value) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Value], Never>, [Value])] in
            state.values.append(value)
            var ready: [(CheckedContinuation<[Value], Never>, [Value])] = []
            state.waiters.removeAll { waiter in
                guard state.values.count >= waiter.count else { return false }
                ready.append((waiter.continuation, state.values))
                return true
            }
            return ready
        }
        for (continuation, values) in ready { continuation.resume(returning: values) }
    }

    var values: [Value] { state.withLock { $0.values } }

    /// Waits until at least `count` values arrived and returns them all. A safety net bounds the
    /// wait (60 s): a broken test records an issue and goes on with what arrived, instead of hanging.
    func wait(for count: Int) async -> [Value] {
        let safety = Task {
            try await Task.sleep(for: .seconds(60))
            self.releaseWaiters()
        }
        defer { safety.cancel() }
        let values = await withCheckedContinuation { continuation in
            let values = state.withLock { state -> [Value]? in
                if state.values.count >= count { return state.values }
                state.waiters.append((count, continuation))
                return nil
            }
            if let values { continuation.resume(returning: values) }
        }
        if values.count < count { Issue.record("waited 60 s for \(count) values, got \(values.count)") }
        return values
    }

    private func releaseWaiters() {
        let (waiters, values) = state.withLock { state in
            defer { state.waiters = [] }
            return (state.waiters, state.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: values) }
    }
}

/// The images used by the loading tests, from ``TestData``.
enum LoadingTestData {
    static let imagesDirectory: URL = TestData.imagesDirectory

    static let hopperJPEG: Data = {
        (try? Data(contentsOf: imagesDirectory.appendingPathComponent("hopper.jpg"))) ?? Data()
    }()
}

typealias DownloadOutcome = Result<DownloadResult, OspreyError>

/// Starts a loopback origin and a `DataLoader`, runs `body`, and shuts both down.
///
/// The loader waits up to 120 s for a read, not the product's 30 s, for the reason
/// ``makeDownloader(_:_:)`` gives: under the thread sanitizer, gated requests held while the
/// others arrived waited more than 30 s, and two gated tests failed (with a queued count that a
/// read timeout of their first requests explains).
func withLoopback(_ body: (LoopbackOrigin, DataLoader) async throws -> Void) async throws {
    let server = try await LoopbackOrigin.start()
    let loader = DataLoader(configuration: DataLoader.Configuration(readTimeout: .seconds(120)))
    do {
        try await body(server, loader)
    } catch {
        try? await loader.shutdown()
        await server.stop()
        throw error
    }
    try await loader.shutdown()
    await server.stop()
}

/// A downloader over `loader`, configured by `configure`.
///
/// Its timeout is 120 s, not the product's 15 s: under the thread sanitizer the whole suite runs
/// on 2 cores with libvips busy, and a loopback round trip has taken over 15 s there. Tests of
/// timeouts set their own.
func makeDownloader(_ loader: any DataLoading, _ configure: (inout ImageDownloader.Configuration) -> Void = { _ in }) -> ImageDownloader {
    var configuration = ImageDownloader.Configuration()
    configuration.timeout = .seconds(120)
    configure(&configuration)
    return ImageDownloader(configuration: configuration, loader: loader)
}

extension Result where Failure == OspreyError {
    /// The download reason of a failure, or `nil`.
    var downloadReason: OspreyError.DownloadReason? {
        guard case .failure(.download(let reason)) = self else { return nil }
        return reason
    }

    var value: Success? { try? get() }
}

extension OspreyError.DownloadReason {
    var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }
}

/// Awaits one download through the async API and returns its outcome.
func outcome(_ downloader: ImageDownloader, _ url: URL, _ options: DownloadOptions = DownloadOptions()) async -> DownloadOutcome {
    do {
        return .success(try await downloader.download(url, options: options))
    } catch let error as OspreyError {
        return .failure(error)
    } catch {
        Issue.record("unexpected error type \(error)")
        return .failure(.download(.transport(url: url, message: "\(error)")))
    }
}
