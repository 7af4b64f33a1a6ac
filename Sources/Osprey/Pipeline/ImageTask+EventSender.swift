extension ImageTask {
    /// Feeds a running task's ``ImageTask/events`` stream: events in the order they were sent, no
    /// progress or preview after the result, the stream's end last.
    ///
    /// Progress and previews come on download and processing threads, the result on another. The
    /// order is settled under a lock, but the stream is fed outside it: the sender that finds no
    /// one feeding feeds its event and then whatever others queued meanwhile. Feeding under the
    /// lock deadlocks: a yield resumes the reading Swift task, which takes that task's status lock,
    /// while a reader cancelled at that moment holds its status lock and runs the stream's
    /// termination, which cancels this task, whose cancelled result comes here for the lock.
    final class EventSender: Sendable {
        /// What the stream gets: an event, or the last event (if any) and then its end.
        private enum Delivery: Sendable {
            case event(Event)
            case last(Event?)
        }

        private struct State: Sendable {
            var resultSent = false
            /// Whether a sender is feeding the stream; others queue their deliveries for it.
            var feeding = false
            var queued: [Delivery] = []
        }

        private let state = Locked(State())
        private let continuation: AsyncStream<Event>.Continuation

        init(_ continuation: AsyncStream<Event>.Continuation) {
            self.continuation = continuation
        }

        /// Sends progress or a preview; dropped once the result was sent.
        func report(_ event: Event) {
            send(.event(event), isResult: false)
        }

        /// Sends the result, or with ``CachePolicy/revalidate`` the newer image that follows it
        /// (`nil`: none), and ends the stream when `last`.
        func complete(_ event: Event?, last: Bool) {
            if last { return send(.last(event), isResult: true) }
            if let event { send(.event(event), isResult: true) }
        }

        private func send(_ delivery: Delivery, isResult: Bool) {
            let feeds = state.withLock { state -> Bool in
                if state.resultSent, !isResult { return false }
                if isResult { state.resultSent = true }
                if state.feeding {
                    state.queued.append(delivery)
                    return false
                }
                state.feeding = true
                return true
            }
            guard feeds else { return }
            var next: Delivery? = delivery
            while let delivery = next {
                switch delivery {
                case .event(let event):
                    continuation.yield(event)
                case .last(let event):
                    if let event { continuation.yield(event) }
                    continuation.finish()
                }
                next = state.withLock { state -> Delivery? in
                    if state.queued.isEmpty {
                        state.feeding = false
                        return nil
                    }
                    return state.queued.removeFirst()
                }
            }
        }
    }
}
