import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Sendable` value guarded by a `Synchronization.Mutex` stored inline, with Mutex's
/// `withLock` shape: Osprey's one lock.
///
/// Inline, not behind a reference: the object that owns a `Locked` holds the lock itself, so a
/// request's jobs and tasks allocate no lock objects, and an uncontended lock is a few inline
/// atomics instead of two calls into libc's pthread mutex.
///
/// The thread sanitizer cannot see Mutex's synchronisation on Linux (its futex lock lives in the
/// uninstrumented standard library), so `Locked` tells it: in a `--sanitize=thread` build every
/// critical section acquires and releases the lock's address through the sanitizer's
/// `__tsan_acquire`/`__tsan_release` (looked up once; absent, and skipped, in other builds), and
/// `swift test --sanitize=thread` reports only real races.
///
/// Not copyable: an owner keeps it in a stored `let`; state that closures outliving the owner
/// share goes in a ``SharedLocked``. Run no code under the lock that is not Osprey's own (a user's closure
/// may call back into Osprey and take the lock again): take what it needs out of the lock and
/// call it after.
package struct Locked<Value: Sendable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>

    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` on the value with the mutex held.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        guard let annotations = SanitizerAnnotations.shared else {
            return try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in try body(&value) }
        }
        // The lock's own address names it to the sanitizer (a `let`, not an instrumented access).
        let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
        return try mutex.withLock { (value: inout sending Value) throws(Failure) -> sending Result in
            annotations.acquire(address)
            defer { annotations.release(address) }
            return try body(&value)
        }
    }
}

/// The thread sanitizer's happens-before annotations, when its runtime is in the process.
struct SanitizerAnnotations: Sendable {
    typealias Annotate = @convention(c) (UnsafeMutableRawPointer?) -> Void
    let acquire: Annotate
    let release: Annotate

    /// Looked up once; `nil` outside a `--sanitize=thread` build.
    static let shared: SanitizerAnnotations? = {
        let process = dlopen(nil, RTLD_NOW)
        guard let acquire = dlsym(process, "__tsan_acquire"), let release = dlsym(process, "__tsan_release") else { return nil }
        return SanitizerAnnotations(acquire: unsafeBitCast(acquire, to: Annotate.self), release: unsafeBitCast(release, to: Annotate.self))
    }()
}

/// A ``Locked`` value behind a reference, for state that closures outliving its owner share
/// (a storage's sweep task and stream terminations hold the state, not the storage).
package final class SharedLocked<Value: Sendable>: Sendable {
    private let locked: Locked<Value>

    package init(_ value: consuming sending Value) {
        locked = Locked(value)
    }

    /// Runs `body` on the value with the mutex held.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try locked.withLock(body)
    }
}
