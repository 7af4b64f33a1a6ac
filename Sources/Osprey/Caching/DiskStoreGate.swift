/// When a ``DiskStorage/Backend`` store may run on its caller's thread, and when the storage's
/// barrier work (the open-time index build, cleans, trims, `removeAll`, `statistics`) may start:
/// the state machine; the backend holds it under a lock and performs what it answers.
///
/// A store runs inline while no barrier is submitted; once one is, later stores go to the
/// storage's queue, behind it, as every store did before (so a store never blocks a caller's
/// thread behind a long trim). A barrier that starts while inline stores that arrived before it
/// are still running waits for them: a barrier sees every store that finished before it was
/// submitted and none that arrived after, the order a queue alone would give.
struct DiskStoreGate: Sendable {
    enum StoreAction: Equatable {
        /// Run the store now, on the caller's thread; report ``inlineStoreFinished()`` after.
        case runInline
        /// Queue the store behind the submitted barriers.
        case enqueue
    }

    enum StartAction: Equatable {
        /// Run the barrier now.
        case run
        /// Block until the last inline store's ``inlineStoreFinished()`` says to wake it.
        case waitForInlineStores
    }

    private(set) var inlineStores = 0
    /// Submitted and not finished (at most one runs: they are barriers on one queue).
    private(set) var barriers = 0
    private(set) var barrierWaiting = false

    mutating func storeArrives() -> StoreAction {
        guard barriers == 0 else { return .enqueue }
        inlineStores += 1
        return .runInline
    }

    /// Returns `true` when the barrier waiting for inline stores must be woken.
    mutating func inlineStoreFinished() -> Bool {
        precondition(inlineStores > 0, "an inline store finished that never started")
        inlineStores -= 1
        guard inlineStores == 0, barrierWaiting else { return false }
        barrierWaiting = false
        return true
    }

    mutating func barrierSubmitted() {
        barriers += 1
    }

    /// Called by the barrier when the queue runs it.
    mutating func barrierStarts() -> StartAction {
        precondition(barriers > 0 && !barrierWaiting, "a barrier started that was not submitted")
        guard inlineStores > 0 else { return .run }
        barrierWaiting = true
        return .waitForInlineStores
    }

    /// Called by a barrier woken from waiting: no store can be inline any more.
    func barrierResumed() {
        precondition(inlineStores == 0 && !barrierWaiting, "a barrier resumed while inline stores ran")
    }

    mutating func barrierFinished() {
        precondition(barriers > 0, "a barrier finished that was not submitted")
        barriers -= 1
    }
}
