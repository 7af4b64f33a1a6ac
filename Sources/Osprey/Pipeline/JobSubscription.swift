import Synchronization

/// A caller's place among the subscribers of a ``SharedJob``, for a caller that can leave at any
/// time, even before it has a place: a ``DownloadTask`` cancelled while its request modifiers
/// run, a task awaiting ``JobRegistry/value(for:priority:work:)`` cancelled before it subscribed.
///
/// The caller subscribes, then records its place with ``joined(_:id:_:)``; ``leave()`` takes it
/// back. Whichever of the two comes second leaves the job, and hands back the caller's `Context`
/// when the caller was still waiting (the job will not call its completion): the caller then
/// tells of its cancellation itself. So a caller hears exactly once, of its outcome or of its
/// cancellation, however the two race.
///
/// A value, not a class: it lives inside the caller's own object (one allocation per caller).
struct JobSubscription<Key: Hashable & Sendable, Value: Sendable, Context: Sendable>: ~Copyable, Sendable {
    /// (Not `private`: Swift 6.3 fails to compile a private type nested in this noncopyable
    /// generic struct when another file uses the struct.)
    enum State {
        /// Subscribing: no place recorded yet.
        case starting
        /// Waiting as subscriber `id` of the job.
        case waiting(SharedJob<Key, Value>, id: Int, Context)
        /// The caller left.
        case left
    }

    private let state = Mutex<State>(.starting)

    /// A caller that has not subscribed yet.
    init() {}

    /// Records that the caller waits as subscriber `id` of `job`, unless it left before: then it
    /// leaves the job now.
    /// - Returns: `context` when the caller had left and was still waiting for the job: the caller
    ///   tells of its cancellation. `nil` otherwise.
    func joined(_ job: SharedJob<Key, Value>, id: Int, _ context: Context) -> Context? {
        let recorded = state.withLock { state in
            guard case .starting = state else { return false }
            state = .waiting(job, id: id, context)
            return true
        }
        return !recorded && job.unsubscribe(id) ? context : nil
    }

    /// The caller leaves: its job, when it has joined one (otherwise ``joined(_:id:_:)`` will).
    /// - Returns: the caller's context when it was still waiting for the job: the caller tells of
    ///   its cancellation. `nil` when its outcome is on its way, or it has no place yet.
    func leave() -> Context? {
        let previous = state.withLock { state in
            defer { state = .left }
            return state
        }
        guard case .waiting(let job, let id, let context) = previous, job.unsubscribe(id) else { return nil }
        return context
    }

    /// The job the caller waits on and its subscriber id, once it joined and until it leaves.
    var place: (job: SharedJob<Key, Value>, id: Int)? {
        state.withLock { state in
            guard case .waiting(let job, let id, _) = state else { return nil }
            return (job, id)
        }
    }
}
