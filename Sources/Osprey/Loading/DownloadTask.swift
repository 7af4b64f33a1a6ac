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
public final class DownloadTask: Sendable, Hashable {
    /// This caller's token.
    public let token: DownloadToken
    /// The URL the caller asked for.
    public let url: URL

    /// Two independent fields, each an atomic (no lock): one allocation per caller, as callers
    /// are made on every download.
    private let cancelled = Atomic<Bool>(false)
    private let priorityValue: Atomic<Int>
    /// Held strongly: the downloader holds its callers' tasks only while they wait, so there is no
    /// lasting cycle, and a weak reference would give the downloader a side table (every retain of
    /// it would take the runtime's slow path).
    private let downloader: ImageDownloader

    init(url: URL, priority: DownloadPriority, downloader: ImageDownloader) {
        self.token = .next()
        self.url = url
        self.downloader = downloader
        priorityValue = Atomic(priority.rawValue)
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Cancels this caller. Idempotent; does nothing once the caller's completion has run.
    public func cancel() {
        let first = cancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        if first { downloader.cancel(token: token) }
    }

    /// This caller's priority. Setting it while the network task is queued re-prioritises the
    /// task at once (a task runs at the highest priority of its callers).
    public var priority: DownloadPriority {
        get { DownloadPriority(rawValue: priorityValue.load(ordering: .relaxed)) ?? .normal }
        set {
            priorityValue.store(newValue.rawValue, ordering: .relaxed)
            downloader.setPriority(newValue, token: token)
        }
    }

    /// Tasks are equal when their tokens are.
    public static func == (lhs: DownloadTask, rhs: DownloadTask) -> Bool { lhs.token == rhs.token }
    /// Hashes the token.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }
}
