import Foundation
import Synchronization

/// Identifies one caller of a download (a receipt, in AFImageDownloader's terms).
package struct DownloadToken: Sendable, Hashable, CustomStringConvertible {
    /// A number unique within the process.
    package let rawValue: UInt64

    static let counter = Atomic<UInt64>(0)

    static func next() -> DownloadToken {
        DownloadToken(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }

    /// `DownloadToken(<number>)`.
    package var description: String { "DownloadToken(\(rawValue))" }
}

/// One caller's handle on a download.
///
/// Callers of the same URL share a network task; each holds its own `DownloadTask`. ``cancel()``
/// removes only this caller: its completion receives
/// ``OspreyError/DownloadReason/cancelled(url:)`` and the network task continues for the others.
/// The network task is cancelled (or removed from the queue) when its last caller cancels.
///
/// Inside the downloader a caller is a subscriber of the network task's shared job
/// (`SharedJob`); the task also carries what is delivered to this caller alone: its options
/// (callback queue, data modifier, body observer) and progress handler.
package final class DownloadTask: Sendable, Hashable {
    /// This caller's token.
    package let token: DownloadToken
    /// The URL the caller asked for.
    package let url: URL
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
    /// The caller's place in the network task's job.
    private let subscription = JobSubscription<RequestKey, Transferred, Void>()

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

    /// Records that the caller waits as subscriber `id` of `job`. When it was cancelled
    /// meanwhile, it leaves at once and receives its cancellation.
    func joined(_ job: ImageDownloader.DownloadJob, id: Int) {
        if subscription.joined(job, id: id, ()) != nil { return deliver(.failure(.download(.cancelled(url: url)))) }
        // A priority set before the subscription was recorded.
        if priority != options.priority { job.setPriority(priority, of: id) }
    }

    /// Delivers `outcome` to the caller: its data modifier runs and its completion is called, on
    /// its callback queue (straight through on `.immediate`: no closure to allocate).
    func deliver(_ outcome: Result<Transferred, OspreyError>) {
        // Fields read in place: a copy of the whole options retains each of their fields.
        guard case .dispatch(let queue) = options.callbackQueue else {
            return completion(ImageDownloader.result(outcome, modifier: options.responseDataModifier))
        }
        let modifier = options.responseDataModifier, completion = completion
        queue.async { completion(ImageDownloader.result(outcome, modifier: modifier)) }
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Cancels this caller. Idempotent; does nothing once the caller's completion has run.
    package func cancel() {
        let first = cancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        guard first else { return }
        // Leaving the job is the one place a waiting caller is cancelled: when it was still
        // waiting, it gets the cancellation; otherwise its outcome is on its way.
        if subscription.leave() != nil { deliver(.failure(.download(.cancelled(url: url)))) }
    }

    /// This caller's priority. Setting it while the network task is queued re-prioritises the
    /// task at once (a task runs at the highest priority of its callers).
    package var priority: DownloadPriority {
        get { DownloadPriority(rawValue: priorityValue.load(ordering: .relaxed)) ?? .normal }
        set {
            priorityValue.store(newValue.rawValue, ordering: .relaxed)
            subscription.place.map { $0.job.setPriority(newValue, of: $0.id) }
        }
    }

    /// Tasks are equal when their tokens are.
    package static func == (lhs: DownloadTask, rhs: DownloadTask) -> Bool { lhs.token == rhs.token }
    /// Hashes the token.
    package func hash(into hasher: inout Hasher) { hasher.combine(token) }
}
