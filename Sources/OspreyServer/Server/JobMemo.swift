import Foundation
import Osprey

/// The jobs of the request paths seen recently, so that a repeated URL (the common case for an
/// image proxy behind a CDN or a page of thumbnails) skips its parse: the grammar, the source's
/// URL parsing and the signature's HMAC, most of a result-cache hit's own work.
///
/// Only successful parses are kept, under the exact path and query that were verified: the same
/// bytes always verify the same way under the server's fixed keys, so reusing the parse changes
/// no answer. A job with an expiry (imgproxy's `exp`) is not reused once it has passed; the path
/// is parsed again and refused as before.
///
/// Bounded by two generations of `capacity / 2` entries each: lookups promote from the old one,
/// and when the new one fills, the old one is dropped, so recently used paths stay and the memo
/// never holds more than `capacity`. Paths longer than ``longestPath`` are not kept.
final class JobMemo: Sendable {
    private struct State {
        var current: [String: PreparedJob] = [:]
        var previous: [String: PreparedJob] = [:]
    }

    private let state = Locked(State())
    private let generation: Int
    /// Longest path (with its query) kept, in bytes: an entry costs about its key twice over.
    static let longestPath = 2048

    /// A memo of at most `capacity` paths (default 1024).
    init(capacity: Int = 1024) {
        generation = max(1, capacity / 2)
    }

    /// The memo key of a request: its path and query as received.
    static func key(path: String, query: String?) -> String {
        guard let query else { return path }
        return path + "?" + query
    }

    /// The job parsed from `key` before, unless it has expired by `now`.
    func job(for key: String, now: () -> Date) -> PreparedJob? {
        // A generation dropped by the promotion is freed here, after the lock.
        let (found, _) = state.withLock { state -> (PreparedJob?, [String: PreparedJob]) in
            if let job = state.current[key] { return (job, [:]) }
            guard let job = state.previous.removeValue(forKey: key) else { return (nil, [:]) }
            return (job, Self.insert(job, key, into: &state, generation: generation))
        }
        guard let found else { return nil }
        if let expires = found.job.expires, expires < now() {
            state.withLock { state in
                state.current[key] = nil
                state.previous[key] = nil
            }
            return nil
        }
        return found
    }

    /// Keeps `job`, parsed and verified from `key`.
    func store(_ job: PreparedJob, for key: String) {
        guard key.utf8.count <= Self.longestPath else { return }
        // The dropped generation is freed here, after the lock.
        _ = state.withLock { state in
            state.previous[key] = nil
            return Self.insert(job, key, into: &state, generation: generation)
        }
    }

    /// The number of paths kept (tests).
    var count: Int { state.withLock { $0.current.count + $0.previous.count } }

    /// Inserts into the current generation, starting a new one when it is full; returns the
    /// generation dropped, if any, to be freed outside the lock.
    private static func insert(_ job: PreparedJob, _ key: String, into state: inout State, generation: Int) -> [String: PreparedJob] {
        var dropped: [String: PreparedJob] = [:]
        if state.current.count >= generation, state.current[key] == nil {
            dropped = state.previous
            state.previous = state.current
            state.current = Dictionary(minimumCapacity: generation)
        }
        state.current[key] = job
        return dropped
    }
}
