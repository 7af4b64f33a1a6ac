import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a miss's stages on its processing queue (or the pipeline's own threads, ``ProcessingPlace``), going on in place when the current thread is
/// already running that queue's work: the decode after the original's write, a processor after
/// the decode, the cache write after the last processor. Only stages started through ``run(on:_:)``
/// mark their thread. A stage several requests share (one decode for two sizes) runs its
/// subscribers' next stages one after another on its thread, as its completions are called.
///
/// Why: each hand-off to another thread wakes it, and on a machine of few cores the wake-ups
/// leave the CPU idle between stages.
enum ProcessingThread {
    /// The queue whose work the current thread runs (its address), or none.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Runs `work` now when the calling thread is running work of `place` (started here), else
    /// there, asynchronously.
    static func run(on place: ProcessingPlace, _ work: @escaping @Sendable () -> Void) {
        let identity = place.identity
        if isRunning(identity) { return work() }
        place.async {
            let previous: UnsafeMutableRawPointer? = pthread_getspecific(key)
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: identity))
            work()
            pthread_setspecific(key, previous)
        }
    }

    /// Whether the calling thread is running work of the place `identity` started by ``run(on:_:)``.
    private static func isRunning(_ identity: UInt) -> Bool {
        let current: UnsafeMutableRawPointer? = pthread_getspecific(key)
        return UInt(bitPattern: current) == identity
    }
}
