import Crypto
import Foundation
import Logging
import Osprey

/// Results shared by every instance in a bucket (`--result-store s3://BUCKET[/PREFIX]`): looked up
/// after the instance's own caches miss and before processing, written after processing.
///
/// An object's key is the SHA-256 of the result-cache key (the normalised request: source,
/// processing, output format or negotiation offer, qualities; never the signature, so a re-signed
/// URL hits), under the prefix. Its body is the result-cache layout (format, creation time,
/// origin policy, then the bytes) after a line with the time it expires, so that no instance
/// serves a result longer than its source stays fresh where it was made.
///
/// The store never fails a request: a lookup that errs or takes longer than
/// ``S3Configuration/timeout`` is a miss (the result is made locally), a write that fails is
/// dropped; both are logged and counted (`osprey_result_store_total{outcome}`). Writes run
/// in the background, so a slow store does not hold the answer; ``flush()`` waits for them.
final class ResultStore: Sendable {
    let client: S3Client
    let path: S3Path
    let metrics: ServerMetrics
    let logger: Logger
    /// The writes running, and those that ended before they were listed.
    private let pending = Locked<(running: [UUID: Task<Void, Never>], ended: Set<UUID>)>(([:], []))

    init(client: S3Client, path: S3Path, metrics: ServerMetrics, logger: Logger) {
        self.client = client
        self.path = path
        self.metrics = metrics
        self.logger = logger
    }

    /// The object of the result-cache key `key`.
    func location(for key: String) throws(ServerError) -> S3Location {
        try path.location(SHA256.hash(data: Data(key.utf8)).withUnsafeBytes { Hex.lowercase($0) })
    }

    /// The stored result of `key` and the seconds it stays fresh, or `nil` (missing, expired, or
    /// the store down or slow: counted and logged).
    func lookup(_ key: String, maxBytes: Int) async -> (ResultCache.Entry, lifetime: TimeInterval)? {
        let fetched: S3Client.Fetched
        do {
            fetched = try await client.get(try location(for: key), maxBytes: maxBytes)
        } catch {
            metrics.resultStore("lookup_failed")
            logger.warning("result store lookup failed, processing locally", metadata: ["reason": "\(error)"])
            return nil
        }
        guard case .object(let object) = fetched, let (entry, expires) = Self.decode(object.data) else {
            metrics.resultStore("miss")
            return nil
        }
        let lifetime = expires.timeIntervalSinceNow
        guard lifetime > 0 else {
            metrics.resultStore("miss")
            return nil
        }
        metrics.resultStore("hit")
        return (entry, lifetime)
    }

    /// Writes `entry` under `key`, fresh for `lifetime` seconds, in the background.
    func store(_ entry: ResultCache.Entry, forKey key: String, lifetime: TimeInterval) {
        guard let location = try? location(for: key) else { return }
        let body = Self.encode(entry, expires: Date().addingTimeInterval(lifetime))
        let id = UUID()
        let task = Task { [self] in
            do throws(S3Error) {
                try await client.put(location, data: body, contentType: "application/octet-stream")
                metrics.resultStore("written")
            } catch {
                metrics.resultStore("write_failed")
                logger.warning("result store write failed", metadata: ["reason": "\(error)"])
            }
            pending.withLock { if $0.running.removeValue(forKey: id) == nil { $0.ended.insert(id) } }
        }
        pending.withLock { if $0.ended.remove(id) == nil { $0.running[id] = task } }
    }

    /// Waits for the writes started so far.
    func flush() async {
        for task in pending.withLock({ Array($0.running.values) }) { await task.value }
    }

    /// `expires <seconds>\n` then the result-cache layout.
    static func encode(_ entry: ResultCache.Entry, expires: Date) -> Data {
        Data("expires \(Int(expires.timeIntervalSince1970))\n".utf8) + ResultCache.encode(entry)
    }

    static func decode(_ stored: Data) -> (ResultCache.Entry, expires: Date)? {
        guard let newline = stored.firstIndex(of: 0x0A), let line = String(data: stored[stored.startIndex..<newline], encoding: .utf8),
            line.hasPrefix("expires "), let seconds = Double(line.dropFirst(8)),
            let entry = ResultCache.decode(Data(stored[stored.index(after: newline)...]))
        else { return nil }
        return (entry, Date(timeIntervalSince1970: seconds))
    }
}
