/// A running request: made by ``ImagePipeline/imageTask(for:options:)`` (with its ``events``), or
/// by a target's `setImage` and an ``ImagePrefetcher``. Cancel it to stop waiting; work shared
/// with other requests continues for them.
///
/// A request delivers its result exactly once (the argument is written beside the task's
/// internal state machine, `ImageTask+StateMachine.swift`).
public final class ImageTask: Sendable {
    private let machine: Locked<StateMachine>
    /// The events of a task made by ``ImagePipeline/imageTask(for:options:)``.
    private let stream: AsyncStream<Event>?

    /// What a task reports while it runs, in order: progress and previews while it loads, then
    /// its result.
    public enum Event: Sendable {
        /// Bytes received so far and the expected total (`nil` when the server did not say).
        case progress(received: Int, expected: Int?)
        /// A progressive preview (``RequestOption/progressiveJPEG(_:)``; ``ImageResult/isPreview``
        /// set): never after the result.
        case preview(ImageResult)
        /// The result: once, or a second time with ``CachePolicy/revalidate`` when the server had
        /// a new image (``ImageResult/isRefresh``).
        case finished(Result<ImageResult, OspreyError>)
    }

    init(completed: Bool, priority: DownloadPriority = .normal, events: AsyncStream<Event>? = nil) {
        machine = Locked(StateMachine(completed: completed, priority: priority))
        stream = events
    }

    /// The task's events, for one reader: progress, progressive previews (never after the
    /// result), then ``Event/finished(_:)``, once or (with ``CachePolicy/revalidate``, when the
    /// server had a new image) twice; then the stream ends. A cache hit is its result alone.
    /// Cancelling the Swift task that reads it (or ``cancel()``) cancels the request. A target's
    /// or a prefetcher's task reports through their callbacks: its stream ends at once.
    public var events: AsyncStream<Event> { stream ?? AsyncStream { $0.finish() } }

    /// Binds the request that cancelling answers. Returns `false` when the task was already
    /// cancelled (the request should deliver its cancellation and do nothing else).
    func attach(_ request: PipelineRequest) -> Bool {
        machine.withLock { $0.attach(request) }
    }

    /// Records the step the request waits on, to stop it on cancellation (at once if the task
    /// was already cancelled). `step` is made under the task's lock: a Swift task made there
    /// records the steps its body starts after its own, never before (which would stop the
    /// wrong step on cancellation).
    func setStep(_ step: @autoclosure () -> PendingStep) {
        let action = machine.withLock { machine -> StateMachine.SetStepAction in
            let action = machine.setStep(step())
            // A step made at the options' priority learns the one set since.
            if case .none = action, machine.priorityChanged { machine.step?.setPriority(machine.priority) }
            return action
        }
        if case .cancel(let step) = action { step.cancel() }
    }

    /// The request's download priority. Default: the options'
    /// (``RequestOption/downloadPriority(_:)``, ``DownloadPriority/normal`` unless set). Setting it
    /// while the request runs moves its work at once: a queued download moves up or down its
    /// queue, and work shared with other requests runs at the highest priority of those still
    /// waiting for it.
    public var priority: DownloadPriority {
        get { machine.withLock { $0.priority } }
        set {
            // Under the lock, so that two changes reach the work in the order they were made.
            machine.withLock { machine in
                guard machine.priority != newValue else { return }
                machine.priority = newValue
                machine.priorityChanged = true
                machine.step?.setPriority(newValue)
            }
        }
    }

    /// Marks the request completed. Returns `false` when it already was (its result is dropped).
    func markCompleted() -> Bool {
        machine.withLock { $0.markCompleted() }
    }

    /// Cancels the request: its completion gets ``OspreyError/PipelineReason/cancelled(source:)``
    /// unless it already completed.
    public func cancel() {
        switch machine.withLock({ $0.cancel() }) {
        case .none:
            return
        case .cancel(let step, let request):
            step?.cancel()
            request?.deliverCancellation()
        }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { machine.withLock { $0.isCancelled } }

    /// Whether the request has delivered its (first) result or error.
    public var isCompleted: Bool { machine.withLock { $0.isCompleted } }
}
