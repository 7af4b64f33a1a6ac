import Foundation
import Synchronization

/// Identifies one caller of ``ImageDownloader`` (a receipt, in AFImageDownloader's terms). It is
/// carried by ``OspreyError/DownloadReason/cancelled(token:)``.
public struct DownloadToken: Sendable, Hashable, CustomStringConvertible {
    /// A number unique within the process.
    public let rawValue: UInt64

    static let counter = Atomic<UInt64>(0)

    static func next() -> DownloadToken {
        DownloadToken(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }

    /// `DownloadToken(<number>)`.
    public var description: String { "DownloadToken(\(rawValue))" }
}

/// One caller's handle on a download.
///
/// Callers of the same URL share a network task; each holds its own `DownloadTask`. ``cancel()``
/// removes only this caller: its completion receives
/// ``OspreyError/DownloadReason/cancelled(token:)`` and the network task continues for the others.
/// The network task is cancelled (or removed from the queue) when its last caller cancels.
///
/// Inside the downloader a caller is a subscriber of the network task's shared job
/// (`SharedJob`); the task also carries what is delivered to this caller alone: its options
/// (callback queue, data modifier, body observer) and progress handler.
public final class DownloadTask: Sendable, Hashable {
    /// This caller's token.
    public let token: DownloadToken
    /// The URL the caller asked for.
    public let url: URL
    /// The caller's options: its callback queue, data modifier and body observer.
    let options: DownloadOptions
    /// The caller's progress handler, called on its callback queue.
    let progress: ImageDownloader.ProgressHandler?
    /// The caller's completion, called once on its callback queue (``deliver(_:)``).
    let completion: ImageDownloader.Completion

    /// Independent fields, each behind its own atomic or lock, in the one allocation per caller.
    /// The task is the caller's whole record: its delivery to the shared job is a closure that
    /// captures the task alone, which costs no allocation (a closure with more captures would).
    private let cancelled = Atomic<Bool>(false)
    private let priorityValue: Atomic<Int>
    /// The job the caller waits on, once it joined.
    private let subscription = Mutex<Subscription>(.starting(requestURL: nil))

    /// Where the caller is in its download.
    private enum Subscription: Sendable {
        /// Not yet subscribed (request modifiers run); `requestURL`: the URL of the request its
        /// modifiers made, when it is not ``url``.
        case starting(requestURL: URL?)
        /// Waiting as subscriber `id` of `job`.
        case waiting(ImageDownloader.DownloadJob, id: Int, requestURL: URL?)
        /// Delivered or cancelled: nothing more to do.
        case ended
    }

    init(
        url: URL, options: DownloadOptions, progress: ImageDownloader.ProgressHandler?,
        completion: @escaping ImageDownloader.Completion
    ) {
        self.token = .next()
        self.url = url
        self.options = options
        self.progress = progress
        self.completion = completion
        priorityValue = Atomic(options.priority.rawValue)
    }

    /// Records that the caller's request modifiers made a request for `requestURL`, another URL
    /// than ``url`` (a data modifier's failure names it). Before ``joined(_:id:)``.
    func modified(to requestURL: URL) {
        subscription.withLock { subscription in
            if case .starting = subscription { subscription = .starting(requestURL: requestURL) }
        }
    }

    /// Records that the caller waits as subscriber `id` of `job`. When it was cancelled
    /// meanwhile, it leaves at once and receives its cancellation.
    func joined(_ job: ImageDownloader.DownloadJob, id: Int) {
        let stored = subscription.withLock { subscription in
            guard case .starting(let requestURL) = subscription, !isCancelled else { return false }
            subscription = .waiting(job, id: id, requestURL: requestURL)
            return true
        }
        if !stored, job.unsubscribe(id) { deliver(.failure(.download(.cancelled(token: token)))) }
        // A priority set before the subscription was recorded.
        if stored, priority != options.priority { job.setPriority(priority, of: id) }
    }

    /// Delivers `outcome` to the caller: its data modifier runs and its completion is called, on
    /// its callback queue (straight through on `.immediate`: no closure to allocate). Forgets the
    /// job first (which holds the outcome).
    func deliver(_ outcome: Result<Transferred, OspreyError>) {
        let requestURL = subscription.withLock { subscription -> URL? in
            defer { subscription = .ended }
            switch subscription {
            case .starting(let requestURL), .waiting(_, _, let requestURL): return requestURL
            case .ended: return nil
            }
        }
        // Fields read in place: a copy of the whole options retains each of their fields.
        let url = requestURL ?? url
        guard case .dispatch(let queue) = options.callbackQueue else {
            return completion(ImageDownloader.result(outcome, modifier: options.responseDataModifier, url: url))
        }
        let modifier = options.responseDataModifier, completion = completion
        queue.async { completion(ImageDownloader.result(outcome, modifier: modifier, url: url)) }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Cancels this caller. Idempotent; does nothing once the caller's completion has run.
    public func cancel() {
        let first = cancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        guard first else { return }
        let waiting = subscription.withLock { subscription -> Subscription in
            defer { subscription = .ended }
            return subscription
        }
        // Leaving the job is the one place a waiting caller is cancelled: when it was still
        // waiting, it gets the cancellation; otherwise its outcome is on its way.
        if case .waiting(let job, let id, _) = waiting, job.unsubscribe(id) {
            deliver(.failure(.download(.cancelled(token: token))))
        }
    }

    /// This caller's priority. Setting it while the network task is queued re-prioritises the
    /// task at once (a task runs at the highest priority of its callers).
    public var priority: DownloadPriority {
        get { DownloadPriority(rawValue: priorityValue.load(ordering: .relaxed)) ?? .normal }
        set {
            priorityValue.store(newValue.rawValue, ordering: .relaxed)
            let waiting = subscription.withLock { subscription -> (ImageDownloader.DownloadJob, Int)? in
                guard case .waiting(let job, let id, _) = subscription else { return nil }
                return (job, id)
            }
            waiting.map { job, id in job.setPriority(newValue, of: id) }
        }
    }

    /// Tasks are equal when their tokens are.
    public static func == (lhs: DownloadTask, rhs: DownloadTask) -> Bool { lhs.token == rhs.token }
    /// Hashes the token.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }
}
