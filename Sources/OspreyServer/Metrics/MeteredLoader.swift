import Foundation
import Osprey

/// Counts origin fetches (and the `304`s among them) and the bytes they bring, times each
/// download (the `download` phase: from sending the request to the body's last byte), and
/// records each source's `Cache-Control` (from `2xx` answers, and from `304`s that carry one).
struct MeteredLoader: DataLoading {
    let base: any DataLoading
    let metrics: ServerMetrics
    let policies: OriginPolicies

    func send(_ request: DownloadRequest) async throws -> (response: DownloadResponse, body: DataChunks) {
        let started = ContinuousClock.now
        var answer = try await base.send(request)
        metrics.originFetches.increment()
        let status = answer.response.statusCode
        if status == 304 { metrics.originNotModified.increment() }
        let cacheControl = answer.response.value(forHTTPHeaderField: "Cache-Control")
        // A 304 without Cache-Control leaves the policy of the 200 it confirms.
        if (200..<300).contains(status) || (status == 304 && cacheControl != nil) {
            policies.record(OriginPolicy(cacheControl: cacheControl), for: request.url)
        }
        let metrics = self.metrics
        answer.body = DataChunks(TimedBody(base: answer.body, started: started, metrics: metrics))
        return answer
    }
}

/// A body that counts its bytes and records the `download` phase when its last chunk has come.
private struct TimedBody: AsyncSequence, Sendable {
    typealias Element = Data
    let base: DataChunks
    let started: ContinuousClock.Instant
    let metrics: ServerMetrics

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: DataChunks.AsyncIterator
        let started: ContinuousClock.Instant
        let metrics: ServerMetrics
        var done = false

        mutating func next() async throws -> Data? {
            guard !done else { return nil }
            guard let chunk = try await base.next() else {
                done = true
                metrics.record("download", ContinuousClock.now - started)
                return nil
            }
            metrics.bytesIn.increment(by: Int64(chunk.count))
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), started: started, metrics: metrics)
    }
}
