/// Shared work a subscriber can leave or re-prioritise: a ``SharedJob``.
protocol SubscribedWork: AnyObject, Sendable {
    /// Removes subscriber `id`; the last one leaving cancels the work.
    /// - Returns: whether `id` was waiting.
    @discardableResult
    func unsubscribe(_ id: Int) -> Bool

    /// Sets subscriber `id`'s priority (the work runs at the highest of its subscribers').
    func setPriority(_ priority: DownloadPriority, of id: Int)
}

/// The step a request or a job is waiting on, and how to stop it. A value rather than a closure:
/// the common steps (a subscription, a download) cost no allocation.
enum PendingStep: Sendable {
    /// Subscriber `id` of shared work.
    case subscription(any SubscribedWork, id: Int)
    /// A caller's download.
    case download(DownloadTask)
    /// A Swift task (a disk lookup, a data provider's read).
    case task(Task<Void, Never>)
    /// The downloader's network task for a job, which its last caller left.
    case network(ImageDownloader, ImageDownloader.DownloadJob)

    /// A Swift task running `body`, started as the step is made: made in the argument of
    /// ``SharedJob/setStep(_:)`` or ``ImageTask/setStep(_:)``, under their lock, so that the steps
    /// the body records come after it.
    static func startingTask(_ body: @escaping @Sendable () async -> Void) -> PendingStep {
        .task(Task(operation: body))
    }

    /// Sets the priority of the step's caller: a subscription's or a download's (a Swift task
    /// and a network task have none of their own).
    func setPriority(_ priority: DownloadPriority) {
        switch self {
        case .subscription(let work, let id): work.setPriority(priority, of: id)
        case .download(let download): download.priority = priority
        case .task, .network: break
        }
    }

    /// Stops the step.
    func cancel() {
        switch self {
        case .subscription(let work, let id): work.unsubscribe(id)
        case .download(let download): download.cancel()
        case .task(let task): task.cancel()
        case .network(let downloader, let job): downloader.stop(job)
        }
    }
}
