/// One request of the pipeline after its memory lookup missed: steps 2-5 of the retrieve flow for
/// its source, then for its alternative sources in order, driven by callbacks.
///
/// The request holds its options once (they are large) and delivers one result through
/// `completion`, unless its ``ImageTask`` is cancelled first: then it delivers
/// ``OspreyError/PipelineReason/cancelled(source:)`` and stops the step in progress.
final class PipelineRequest: Sendable {
    typealias Completion = @Sendable (Result<ImageResult, OspreyError>) -> Void

    let pipeline: ImagePipeline
    let source: ImageSource
    /// The request's options, shared with the stages it starts (no copy of them).
    let sharedOptions: SharedOptions
    var options: OspreyOptions { _read { yield sharedOptions.value } }
    let task: ImageTask
    let progress: SharedJob<DeliveredImage>.ProgressHandler?
    /// Gets the revalidated result with ``OspreyOptions/refreshCached`` (or `nil`: none comes).
    let refresh: (@Sendable (ImageResult?) -> Void)?
    /// Where `completion` runs.
    private let callbackQueue: CallbackQueue
    private let completion: Completion

    init(pipeline: ImagePipeline, source: ImageSource, options: SharedOptions, task: ImageTask,
         progress: SharedJob<DeliveredImage>.ProgressHandler?, refresh: (@Sendable (ImageResult?) -> Void)?,
         callbackQueue: CallbackQueue, completion: @escaping Completion) {
        self.pipeline = pipeline
        self.source = source
        self.sharedOptions = options
        self.task = task
        self.progress = progress
        self.refresh = refresh
        self.callbackQueue = callbackQueue
        self.completion = completion
    }

    /// Starts with the request's own source. `memoryChecked`: the caller has just missed the
    /// memory cache for it (its lookup is not repeated; the last stage looks again before loading).
    func start(memoryChecked: Bool = false) {
        guard task.attach(self) else { return deliverCancellation() }
        attempt(0, failures: [], memoryChecked: memoryChecked)
    }

    /// Delivers ``OspreyError/PipelineReason/cancelled(source:)`` unless the request has completed
    /// (its task was cancelled; the task stops the step in progress).
    func deliverCancellation() {
        complete(.failure(cancelled))
    }

    private var cancelled: OspreyError { .pipeline(.cancelled(source: source.description)) }

    private func attempt(_ index: Int, failures: [OspreyError], memoryChecked: Bool = false) {
        let candidate = index == 0 ? source : options.alternativeSources[index - 1]
        retrieveOne(candidate, memoryChecked: memoryChecked) { [self] result in
            switch result {
            case .success(var image):
                if index > 0 { image.originalSource = source }
                complete(.success(image))
            case .failure(let error):
                if error.isCancellation || task.isCancelled { return complete(.failure(cancelled)) }
                let failures = failures + [error]
                if index < options.alternativeSources.count { return attempt(index + 1, failures: failures) }
                if failures.count == 1 { return complete(.failure(failures[0])) }
                let sources = [source] + options.alternativeSources
                complete(.failure(.pipeline(.allSourcesFailed(sources: sources.map(\.description), errors: failures))))
            }
        }
    }

    /// Delivers the request's result, once.
    private func complete(_ result: Result<ImageResult, OspreyError>) {
        guard task.markCompleted() else { return }
        callbackQueue.deliver(result, to: completion)
    }

    /// Steps 2-5 of the retrieve flow for one source.
    private func retrieveOne(_ candidate: ImageSource, memoryChecked: Bool, done: @escaping Completion) {
        let cache = options.targetCache ?? pipeline.configuration.cache
        let key = pipeline.cacheKey(for: candidate)
        guard !options.forceRefresh else { return deliver(candidate, key: key, done: done) }
        let identifier = options.processor.identifier
        if !memoryChecked, let image = cache.retrieveImageInMemoryCache(forKey: key, processorIdentifier: identifier, options: options.cacheOptions) {
            return hit(image, .memory, candidate, key: key, done: done)
        }
        guard !options.fromMemoryCacheOrRefresh else { return deliver(candidate, key: key, done: done) }
        let cacheOptions = options.cacheOptions
        // The disk lookup reads a file: a task of its own.
        let lookup = Task { [self] in
            // A disk entry that cannot be read counts as a miss (the cache removes it).
            let found = (try? await cache.retrieveImage(forKey: key, processorIdentifier: identifier, options: cacheOptions)) ?? .none
            if Task.isCancelled { return }
            if let image = found.image {
                hit(image, found.cacheType, candidate, key: key, done: done)
            } else {
                deliver(candidate, key: key, done: done)
            }
        }
        task.setStep(.task(lookup))
    }

    private func hit(_ image: Image, _ cacheType: CacheType, _ candidate: ImageSource, key: String, done: Completion) {
        let result = ImageResult(image: options.imageModifier?(image) ?? image, cacheType: cacheType, source: candidate)
        if options.refreshCached, case .network = candidate {
            pipeline.startRevalidation(candidate, key: key, options: options, refresh: refresh)
        } else {
            refresh?(nil)
        }
        done(.success(result))
    }

    /// Waits for the last stage, shared with every request for the same work.
    private func deliver(_ candidate: ImageSource, key: String, done: @escaping Completion) {
        // Captures the request, not a copy of its options.
        let subscription = pipeline.subscribeDelivery(candidate, key: key, options: sharedOptions, progress: progress) { [self] result in
            switch result {
            case .success(let delivered):
                refresh?(nil)
                done(.success(ImageResult(image: options.imageModifier?(delivered.image) ?? delivered.image, cacheType: delivered.cacheType,
                                          source: candidate, data: options.returnsData ? delivered.data : nil)))
            case .failure(let error):
                done(.failure(error))
            }
        }
        if let (job, id) = subscription { task.setStep(.subscription(job, id: id)) }
    }
}
