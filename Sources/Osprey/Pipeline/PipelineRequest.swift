import Logging

/// One request of the pipeline after its memory lookup missed: steps 2-5 of the retrieve flow for
/// its source, then for its alternative sources in order, driven by callbacks.
///
/// The request holds its options once (they are large) and delivers one result through
/// `completion`, unless its ``ImageTask`` is cancelled first: then it delivers
/// ``OspreyError/PipelineReason/cancelled(source:)`` and stops the step in progress.
final class PipelineRequest: Sendable {
    typealias Completion = @Sendable (Result<ImageResult, OspreyError>) -> Void

    let pipeline: ImagePipeline
    /// The request as its entry point resolved it (source, options, caches, keys, downloader).
    let request: ResolvedRequest
    var source: ImageSource { request.source }
    var options: OspreyOptions { _read { yield request.sharedOptions.value } }
    let task: ImageTask
    let progress: JobProgressHandler?
    /// Gets the revalidated result with ``OspreyOptions/refreshCached`` (or `nil`: none comes).
    let refresh: (@Sendable (ImageResult?) -> Void)?
    /// Where `completion` runs.
    private let callbackQueue: CallbackQueue
    private let completion: Completion

    init(
        pipeline: ImagePipeline, request: ResolvedRequest, task: ImageTask,
        progress: JobProgressHandler?, refresh: (@Sendable (ImageResult?) -> Void)?,
        callbackQueue: CallbackQueue, completion: @escaping Completion
    ) {
        self.pipeline = pipeline
        self.request = request
        self.task = task
        self.progress = progress
        self.refresh = refresh
        self.callbackQueue = callbackQueue
        self.completion = completion
    }

    /// Starts with the request's own source. When the resolution has just missed the memory cache
    /// (``ResolvedRequest/memoryMiss``), the lookup is not repeated; the last stage looks again
    /// before loading only if anything was stored since.
    func start() {
        guard task.attach(self) else { return deliverCancellation() }
        attempt(0, failures: [])
    }

    /// Delivers ``OspreyError/PipelineReason/cancelled(source:)`` unless the request has completed
    /// (its task was cancelled; the task stops the step in progress).
    func deliverCancellation() {
        complete(.failure(cancelled))
    }

    private var cancelled: OspreyError { .pipeline(.cancelled(source: source.description)) }

    /// One try of the request: its source (`index` 0, the request as resolved) or an alternative
    /// source (its own resolved request), after the failures of the earlier ones. Passed down the
    /// steps instead of a completion closure per try.
    private struct Attempt: Sendable {
        let index: Int
        let failures: [OspreyError]
        let request: ResolvedRequest
    }

    private func attempt(_ index: Int, failures: [OspreyError]) {
        let tried = index == 0 ? request : request.alternative(options.alternativeSources[index - 1], pipeline: pipeline)
        retrieveOne(Attempt(index: index, failures: failures, request: tried))
    }

    /// The outcome of one try: the request's result, or the next alternative source.
    private func finished(_ attempt: Attempt, _ result: Result<ImageResult, OspreyError>) {
        switch result {
        case .success(var image):
            if attempt.index > 0 { image.originalSource = source }
            complete(.success(image))
        case .failure(let error):
            if error.isCancellation || task.isCancelled { return complete(.failure(cancelled)) }
            let failures = attempt.failures + [error]
            if attempt.index < options.alternativeSources.count { return self.attempt(attempt.index + 1, failures: failures) }
            if failures.count == 1 { return complete(.failure(failures[0])) }
            let sources = [source] + options.alternativeSources
            complete(.failure(.pipeline(.allSourcesFailed(sources: sources.map(\.description), errors: failures))))
        }
    }

    /// Delivers the request's result, once: ``ImageTask/StateMachine`` answers `true` to one
    /// `markCompleted` only.
    private func complete(_ result: Result<ImageResult, OspreyError>) {
        guard task.markCompleted() else { return }
        callbackQueue.deliver(result, to: completion)
    }

    /// Steps 2-5 of the retrieve flow for one source.
    private func retrieveOne(_ attempt: Attempt) {
        let request = attempt.request
        guard !options.forceRefresh else { return deliver(memoryMiss: nil, attempt) }
        var memoryMiss = request.memoryMiss
        if memoryMiss == nil {
            switch pipeline.memoryLookup(request.computedKey, options: options) {
            case .hit(let image): return hit(image, .memory, attempt)
            case .miss(let token): memoryMiss = token
            }
        }
        let logger = pipeline.configuration.logger
        let key = request.key, identifier = request.processorIdentifier, cache = request.cache
        logger.trace("memory miss", metadata: ["osprey.key": "\(key)", "osprey.processor": "\(identifier)"])
        guard !options.fromMemoryCacheOrRefresh else { return deliver(memoryMiss: memoryMiss, attempt) }
        let cacheOptions = options.cacheOptions
        logger.trace("disk lookup", metadata: ["osprey.key": "\(key)"])
        // The disk lookup reads a file: a task of its own.
        let lookup = Task { [self] in
            // A disk entry that cannot be read counts as a miss (the cache removes it).
            let found = (try? await cache.retrieveImage(forKey: key, processorIdentifier: identifier, options: cacheOptions)) ?? .none
            if Task.isCancelled { return }
            logger.trace(found.image == nil ? "disk miss" : "disk hit", metadata: ["osprey.key": "\(key)"])
            if let image = found.image {
                hit(image, found.cacheType, attempt)
            } else {
                // No miss token: the last stage looks memory up again after the disk lookup.
                deliver(memoryMiss: nil, attempt)
            }
        }
        task.setStep(.task(lookup))
    }

    private func hit(_ image: Image, _ cacheType: CacheType, _ attempt: Attempt) {
        let request = attempt.request, candidate = request.source
        let result = ImageResult(image: options.imageModifier?(image) ?? image, cacheType: cacheType, source: candidate)
        // The cached result is handed on before the revalidation starts, so that it comes first
        // on a serial callback queue.
        finished(attempt, .success(result))
        if options.refreshCached, case .network = candidate {
            pipeline.startRevalidation(request, refresh: refresh)
        } else {
            refresh?(nil)
        }
    }

    /// Waits for the last stage, shared with every request for the same work (see
    /// ``ImagePipeline/subscribeDelivery(_:memoryMiss:progress:completion:)``). `memoryMiss`: the
    /// target memory cache's token for this try's miss (`nil`: the last stage looks again).
    private func deliver(memoryMiss: MemoryMiss?, _ attempt: Attempt) {
        let request = attempt.request, candidate = request.source
        let subscription = pipeline.subscribeDelivery(request, memoryMiss: memoryMiss, progress: progress) { [self] result in
            switch result {
            case .success(let delivered):
                refresh?(nil)
                var result = ImageResult(
                    image: options.imageModifier?(delivered.image) ?? delivered.image,
                    cacheType: delivered.cacheType, source: candidate,
                    data: options.returnsData ? delivered.data : nil)
                result.decoded = delivered.decoded
                finished(attempt, .success(result))
            case .failure(let error):
                finished(attempt, .failure(error))
            }
        }
        if let (job, id) = subscription { task.setStep(.subscription(job, id: id)) }
    }
}
