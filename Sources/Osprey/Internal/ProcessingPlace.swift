import Dispatch

/// Where a miss's decoding, processing and cache writes run: a dispatch queue (the request's
/// ``RequestOption/processingQueue(_:)``, else ``ImagePipeline/Configuration/processingQueue``) or,
/// with ``ImagePipeline/Configuration/processingThreadNice``, the pipeline's own threads.
enum ProcessingPlace: Sendable {
    case queue(DispatchQueue)
    case threads(ProcessingThreads)

    /// The queue's or the threads' address: what ``ProcessingThread`` marks a running thread with.
    var identity: UInt {
        switch self {
        case .queue(let queue): UInt(bitPattern: Unmanaged.passUnretained(queue).toOpaque())
        case .threads(let threads): UInt(bitPattern: Unmanaged.passUnretained(threads).toOpaque())
        }
    }

    /// Runs `work` there, asynchronously.
    func async(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .queue(let queue): queue.async(execute: work)
        case .threads(let threads): threads.async(work)
        }
    }

    /// Runs `work` there and returns its result to the awaiting task (as `DispatchQueue.run`).
    func run<T: Sendable, Failure: Error>(_ work: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            self.async { continuation.resume(returning: Result { () throws(Failure) -> T in try work() }) }
        }
        return try result.get()
    }
}
