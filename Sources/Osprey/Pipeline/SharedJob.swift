import Synchronization

/// One unit of pipeline work (a fetch, a decode, a processing stage, a delivery) shared by every
/// request that asks for the same key, as Nuke's task graph shares work between requests.
///
/// The job is driven by callbacks, not by a Swift task of its own: its work is started with its
/// first subscriber (``JobRegistry/subscribe(_:progress:completion:work:)``), moves on from
/// completion handlers (a download, a dispatch queue, an upstream job), and ends with
/// ``finish(_:)``, which calls every subscriber's completion once. A subscriber that leaves
/// (``unsubscribe(_:)``) gets no call; when the last one leaves before the work is done, the job
/// ends unfinished and stops the step its work waits on (``setStep(_:)``), so a later request
/// starts afresh. A request that misses costs no Swift task in the pipeline: with a task per stage,
/// tasks, continuations and thread hand-offs were most of a miss on a 2-core machine.
final class SharedJob<Key: Hashable & Sendable, Value: Sendable>: Unsubscribing {
    /// Receives the job's outcome, once.
    typealias Completion = @Sendable (Result<Value, OspreyError>) -> Void
    /// Receives (bytes received, bytes expected) while a download runs.
    typealias ProgressHandler = JobProgressHandler

    private struct Subscriber {
        var id: Int
        var completion: Completion
        var progress: ProgressHandler?
    }

    private struct State {
        /// In the order they came. Usually there is one: it is kept inline, with no array.
        var first: Subscriber?
        /// The subscribers after the first (a linear search is cheapest for a few).
        var others: [Subscriber] = []
        var nextID = 0
        var outcome: Result<Value, OspreyError>?
        /// Finished, or left by its last subscriber: takes no new subscribers.
        var ended = false
        /// The work's current step (a download, an upstream subscription), stopped on abandonment.
        var step: PendingStep?
    }

    /// How a subscription went.
    enum Subscription {
        /// Waiting for the outcome under this id.
        case waiting(id: Int)
        /// The job had already finished with this outcome (the completion was not called).
        case finished(Result<Value, OspreyError>)
        /// Every subscriber left before the work finished: the job is dead.
        case abandoned
    }

    /// Inline: one allocation per job. (Jobs are short-lived and rarely contended.)
    private let state: Mutex<State>
    /// The registry holding the job under `key`, told when the job finishes or is abandoned
    /// (it forgets the job then). Held directly, not through a closure or a protocol value, so
    /// that code specialised for the job's types forgets it with specialised code too.
    private let registry: JobRegistry<Key, Value>
    private let key: Key

    /// A job with its first subscriber, id ``firstID`` (no lock taken to add it).
    init(registry: JobRegistry<Key, Value>, key: Key, progress: ProgressHandler?, completion: @escaping Completion) {
        self.registry = registry
        self.key = key
        state = Mutex(State(first: Subscriber(id: Self.firstID, completion: completion, progress: progress), nextID: Self.firstID))
    }

    /// The id of the subscriber a job is made with.
    static var firstID: Int { 1 }

    /// Adds a subscriber, unless the job has ended.
    func subscribe(progress: ProgressHandler?, completion: @escaping Completion) -> Subscription {
        state.withLock { state in
            if let outcome = state.outcome { return .finished(outcome) }
            if state.ended { return .abandoned }
            state.nextID += 1
            let subscriber = Subscriber(id: state.nextID, completion: completion, progress: progress)
            // A job is made with its first subscriber and ends when its last one leaves: a job
            // still taking subscribers has one, so a new one joins the others.
            state.others.append(subscriber)
            return .waiting(id: state.nextID)
        }
    }

    /// Removes subscriber `id`; its completion will not be called. The last subscriber leaving
    /// cancels the work. Does nothing once the job has ended.
    func unsubscribe(_ id: Int) {
        let (last, step): (Bool, PendingStep?) = state.withLock { state in
            guard !state.ended else { return (false, nil) }
            if state.first?.id == id {
                state.first = nil
            } else if let index = state.others.firstIndex(where: { $0.id == id }) {
                state.others.remove(at: index)
            } else {
                return (false, nil)
            }
            guard state.first == nil && state.others.isEmpty else { return (false, nil) }
            state.ended = true
            defer { state.step = nil }
            return (true, state.step)
        }
        guard last else { return }
        step?.cancel()
        registry.forget(key, self)
    }

    /// Records the step the work waits on, to stop it when the job is abandoned (at once if it
    /// already was).
    func setStep(_ step: PendingStep) {
        let abandoned = state.withLock { state in
            if state.ended { return state.outcome == nil }
            state.step = step
            return false
        }
        if abandoned { step.cancel() }
    }

    /// Ends the job with `outcome` and calls every subscriber's completion (outside the lock).
    /// Does nothing when the job was abandoned or has finished.
    func finish(_ outcome: Result<Value, OspreyError>) {
        let subscribers: (Subscriber?, [Subscriber])? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            state.outcome = outcome
            state.step = nil
            defer { (state.first, state.others) = (nil, []) }
            return (state.first, state.others)
        }
        guard let (first, others) = subscribers else { return }
        registry.forget(key, self)
        first?.completion(outcome)
        for subscriber in others { subscriber.completion(outcome) }
    }

    /// Tells every subscriber's progress handler how far the work has come.
    func reportProgress(received: Int, expected: Int?) {
        let (first, others) = state.withLock { state in (state.first?.progress, state.others.compactMap(\.progress)) }
        first?(received, expected)
        for handler in others { handler(received, expected) }
    }

    /// How many subscribers wait for the job (for tests).
    var subscriberCount: Int { state.withLock { ($0.first == nil ? 0 : 1) + $0.others.count } }
}

/// Receives (bytes received, bytes expected) while a download runs.
typealias JobProgressHandler = @Sendable (_ received: Int, _ expected: Int?) -> Void
