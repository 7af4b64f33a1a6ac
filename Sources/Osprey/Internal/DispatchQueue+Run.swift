import Dispatch

extension DispatchQueue {
    /// Runs `work` on this queue and returns its result to the awaiting task: blocking or
    /// CPU-bound work (file I/O, libvips, `getaddrinfo`) kept off Swift's cooperative pool, whose
    /// threads (one per core) every other task needs. `flags` as for `async` (e.g. `.barrier`).
    package func run<T: Sendable, Failure: Error>(
        flags: DispatchWorkItemFlags = [], _ work: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            self.async(flags: flags) { continuation.resume(returning: Result { () throws(Failure) -> T in try work() }) }
        }
        return try result.get()
    }
}
