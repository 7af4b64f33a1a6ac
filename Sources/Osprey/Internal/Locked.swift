#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Sendable` value guarded by a `pthread_mutex_t`, with `Synchronization.Mutex`'s `withLock`
/// shape: Osprey's one lock.
///
/// Not `Synchronization.Mutex`, because the thread sanitizer cannot see Mutex's synchronisation
/// on Linux (its futex lock lives in the uninstrumented standard library; checked with Swift
/// 6.3), so every access under a Mutex is reported as a race and real races drown in the noise.
/// pthread mutexes are intercepted by the sanitizer, so `swift test --sanitize=thread` reports
/// only real races.
///
/// The value and the mutex share one allocation (a `ManagedBuffer`), as a Mutex stored inline
/// would; copies of a `Locked` share it. Run no code under the lock that is not Osprey's own
/// (a user's closure may call back into Osprey and take the lock again): take what it needs out
/// of the lock and call it after.
struct Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable is safe: the value is only read or written through `withLock`, with the
    // mutex held, so no two threads touch it at once; the mutex is never moved (it lives in the
    // storage's tail allocation) and is destroyed only in deinit, when no thread can hold it.
    private let storage: Storage

    init(_ value: Value) {
        storage = Storage.make(value)
    }

    /// Runs `body` on the value with the mutex held.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { (value, mutex) throws(Failure) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    /// The value (the header) and its mutex (the one element) in one allocation.
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        static func make(_ value: Value) -> Storage {
            let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { mutex in
                #if canImport(Glibc)
                    // Adaptive: a contended lock spins briefly before sleeping in the kernel; Osprey
                    // holds its locks for well under a microsecond, so a waiter usually gets the lock
                    // while spinning instead of paying a futex sleep and wake.
                    var attributes = pthread_mutexattr_t()
                    pthread_mutexattr_init(&attributes)
                    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
                    pthread_mutex_init(mutex, &attributes)
                    pthread_mutexattr_destroy(&attributes)
                #else
                    pthread_mutex_init(mutex, nil)
                #endif
            }
            return storage
        }

        deinit {
            // The header (the value) is deinitialised by ManagedBuffer; the element is ours.
            withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
                mutex.deinitialize(count: 1)
            }
        }
    }
}
