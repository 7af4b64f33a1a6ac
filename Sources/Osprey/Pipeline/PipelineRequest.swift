import Logging

/// One request of the pipeline after its resolution: the lookup order (``ResolvedRequest/step(after:)``)
/// for its source, then for its alternative sources in order, driven by callbacks.
///
/// The request holds its options once (they are large) and delivers one result through
/// `completion`, unless its ``ImageTask`` is cancelled first: then it delivers
/// ``OspreyError/PipelineReason/cancelled(source:)`` and stops the step in progress.
final class PipelineRequest: Sendable {
    typealias Completion = @Sendable (Result<ImageResult, OspreyError>) -> Void

    let pipeline: ImagePipeline
    /// The pipeline's logger, read once (a read of the configuration copies all of it in a debug build).
    private let logger: Logger
    /// The request as its entry point resolved it (source, options, caches, keys, downloader).
    let request: ResolvedRequest
    var source: ImageSource { request.source }
    /// The request's options (its own copy, read in place by every step).
    let options: ResolvedOptions
    let task: ImageTask
    let progress: JobProgressHandler?
    /// Gets the revalidated result with ``CachePolicy/revalidate`` (or `nil`: none comes).
    let refresh: (@Sendable (ImageResult?) -> Void)?
    /// Gets each progressive preview (``ProgressiveJPEG``), before the result, on the callback
    /// queue; `nil`: the request asked for none.
    let preview: (@Sendable (ImageResult) -> Void)?
    /// The request's place among the listeners of its download's previews, while it waits.
    private let previewAttachment = Locked<PreviewRegistry.Attachment?>(nil)
    /// Where `completion` runs.
    private let callbackQueue: CallbackQueue
    private let completion: Completion

    init(
        pipeline: ImagePipeline, request: ResolvedRequest, task: ImageTask,
        progress: JobProgressHandler?, refresh: (@Sendable (ImageResult?) -> Void)?,
        preview: (@Sendable (ImageResult) -> Void)? = nil,
        callbackQueue: CallbackQueue, completion: @escaping Completion
    ) {
        self.preview = preview
        self.pipeline = pipeline
        logger = pipeline.configuration.logger
        self.request = request
        self.options = request.options
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
        detachPreviews()
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
        detachPreviews()
        guard task.markCompleted() else { return }
        callbackQueue.deliver(result, to: completion)
    }

    /// One try of the request, from its first step (``ResolvedRequest/step(after:)``): the memory
    /// step is skipped when the resolution has just missed the memory cache (``ResolvedRequest/memoryMiss``).
    private func retrieveOne(_ attempt: Attempt) {
        let request = attempt.request
        guard let memoryMiss = request.memoryMiss else { return retrieve(request.step(after: nil), attempt, memoryMiss: nil) }
        missedMemory(request)
        retrieve(request.step(after: .memory), attempt, memoryMiss: memoryMiss)
    }

    private func missedMemory(_ request: ResolvedRequest) {
        logger.trace(
            "memory miss", metadata: ["osprey.key": "\(request.key)", "osprey.processor": "\(request.processorIdentifier)"])
    }

    /// Runs `step` for one try: the steps of this request (memory, disk), then the work it shares
    /// with others (``deliver(memoryMiss:_:)``). `memoryMiss`: the target memory cache's token for
    /// this try's miss (`nil`: the shared work looks memory up again).
    private func retrieve(_ step: RetrieveStep, _ attempt: Attempt, memoryMiss: MemoryMiss?) {
        let request = attempt.request
        switch step {
        case .memory:
            switch pipeline.memoryLookup(request.computedKey, options: options) {
            case .hit(let image): hit(image, .memory, attempt)
            case .miss(let token):
                missedMemory(request)
                retrieve(request.step(after: .memory), attempt, memoryMiss: token)
            }
        case .disk:
            let key = request.key, identifier = request.processorIdentifier, cache = request.cache
            let logger = self.logger
            logger.trace("disk lookup", metadata: ["osprey.key": "\(key)"])
            let cacheOptions = options.cacheOptions(servingExpired: pipeline.servesExpired(request.source))
            // The disk lookup reads a file: a task of its own, which may record the next step (the
            // delivery's subscription), after this one.
            task.setStep(
                .startingTask { [self] in
                    // A disk entry that cannot be read counts as a miss (the cache removes it).
                    let found = (try? await cache.retrieveImage(forKey: key, processorIdentifier: identifier, options: cacheOptions)) ?? .none
                    if Task.isCancelled { return }
                    logger.trace(found.image == nil ? "disk miss" : "disk hit", metadata: ["osprey.key": "\(key)"])
                    if let image = found.image { return hit(image, found.cacheType, attempt) }
                    // No miss token: the shared work looks memory up again after the disk lookup.
                    retrieve(request.step(after: .disk), attempt, memoryMiss: nil)
                })
        case .share, .originalMemory, .originalDisk, .load, .fail:
            deliver(memoryMiss: memoryMiss, attempt)
        }
    }

    private func hit(_ image: Image, _ cacheType: CacheType, _ attempt: Attempt) {
        let request = attempt.request, candidate = request.source
        let result = ImageResult(image: options.imageModifier?(image) ?? image, cacheType: cacheType, source: candidate)
        // The cached result is handed on before the revalidation starts, so that it comes first
        // on a serial callback queue.
        finished(attempt, .success(result))
        if options.cachePolicy == .revalidate, case .network = candidate {
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
        let fetchKey = HashedKey(FetchJobKey(request))
        if preview != nil { attachPreviews(request, fetchKey: fetchKey, source: candidate) }
        let subscription = pipeline.subscribeDelivery(request, memoryMiss: memoryMiss, progress: progress, fetchKey: fetchKey) {
            [self] result in
            switch result {
            case .success(let delivered):
                let result = ImageResult(
                    image: options.imageModifier?(delivered.image) ?? delivered.image,
                    cacheType: delivered.cacheType, source: candidate,
                    data: options.returnsData ? delivered.data : nil, decoded: delivered.decoded, frameDecoder: delivered.frames)
                finished(attempt, .success(result))
                refresh?(nil)
            case .failure(let error):
                finished(attempt, .failure(error))
            }
        }
        if let (job, id) = subscription { task.setStep(.subscription(job, id: id)) }
    }

    // MARK: - Progressive previews

    /// Listens for the previews of the download `fetchKey` names, when the options ask for them.
    private func attachPreviews(_ request: ResolvedRequest, fetchKey: HashedKey<FetchJobKey>, source: ImageSource) {
        let attachment = pipeline.attachPreviews(request, fetchKey: fetchKey) { [self] image, info in
            self.deliverPreview(image, info: info, source: source)
        }
        previewAttachment.withLock { $0 = attachment }
        // A cancellation that came meanwhile found nothing to detach.
        if task.isCompleted || task.isCancelled { detachPreviews() }
    }

    /// Stops listening for previews (the request has its result, or tries another source).
    private func detachPreviews() {
        guard preview != nil, let attachment = previewAttachment.withLock({ $0.take() }) else { return }
        pipeline.previews.detach(attachment)
    }

    /// Hands a preview to the request's handler on the callback queue, unless the request has
    /// completed: checked again on the queue, so on a serial queue no preview follows the result.
    private func deliverPreview(_ image: Image, info: PreviewInfo, source: ImageSource) {
        guard let preview, !task.isCompleted else { return }
        var result = ImageResult(image: options.imageModifier?(image) ?? image, cacheType: .none, source: source)
        result.preview = info
        let delivered = result
        callbackQueue.execute { [task] in
            if !task.isCompleted { preview(delivered) }
        }
    }
}
