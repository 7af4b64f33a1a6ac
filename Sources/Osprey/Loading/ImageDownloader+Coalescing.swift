import Foundation

/// Download coalescing: a caller whose final request (after its request modifiers) equals a queued
/// or running one joins that network task's job instead of starting another
/// (``register(_:request:checkURL:completion:)``); a caller that cancels leaves it
/// (``DownloadTask/cancel()``), and the last one to leave stops the network task
/// (``stop(_:)``: out of the queue, or its worker cancelled).
extension ImageDownloader {
    /// Starts `task`: checks the failed-URL list and the scheme, runs the request modifiers, then registers it.
    func start(_ task: DownloadTask) {
        let url = task.url, options = task.options, completion = task.completion
        if !options.retryFailed, isOnFailedURLList(url) {
            return options.callbackQueue.deliver(.failure(.download(.previouslyFailed(url: url))), to: completion)
        }
        guard Self.isSupported(url) else {
            addToFailedURLList(url)
            return options.callbackQueue.deliver(.failure(.download(.invalidURL(url.absoluteString))), to: completion)
        }
        let request = makeRequest(url, options: options)
        let modifiers =
            configuration.requestModifier == nil && options.requestModifier == nil
            ? []
            : [configuration.requestModifier, options.requestModifier].compactMap { $0 }
        if modifiers.allSatisfy(\.isSynchronous) {
            var modified: DownloadRequest? = request
            for modifier in modifiers { modified = modified.flatMap(modifier.modifySync) }
            register(task, request: modified, checkURL: !modifiers.isEmpty)
        } else {
            Task {
                var modified: DownloadRequest? = request
                for modifier in modifiers {
                    guard let current = modified else { break }
                    modified = await modifier.modify(current)
                }
                register(task, request: modified, checkURL: true)
            }
        }
    }

    /// Subscribes `task` to the job of `request`, starting a network task when none runs for it;
    /// `checkURL` when request modifiers may have changed its URL.
    func register(_ task: DownloadTask, request: DownloadRequest?, checkURL: Bool) {
        let options = task.options, completion = task.completion
        if checkURL, let request, !Self.isSupported(request.url) {
            let error = OspreyError.download(.invalidURL(request.url.absoluteString))
            return options.callbackQueue.execute { completion(.failure(error)) }
        }
        guard let request, !task.isCancelled else {
            let error: OspreyError =
                task.isCancelled ? .download(.cancelled(token: task.token)) : .download(.emptyRequest(url: task.url))
            return options.callbackQueue.execute { completion(.failure(error)) }
        }
        if checkURL, request.url != task.url { task.modified(to: request.url) }
        // Hashed once.
        let key = RequestKey(request)
        // The caller's own delivery (its data modifier, on its callback queue): it captures the
        // task alone, so it costs no allocation.
        let delivery: DownloadJob.Completion = { [task] outcome in task.deliver(outcome) }
        let progress = task.progress.map { handler -> JobProgressHandler in
            guard case .dispatch(let queue) = options.callbackQueue else { return handler }
            return { received, expected in queue.async { handler(received, expected) } }
        }
        let priority = task.priority
        let subscription = jobs.subscribe(
            key, priority: priority, owner: task, progress: progress, completion: delivery
        ) { job in
            schedule(
                job, priority: priority,
                settings: TransferSettings(
                    redirectHandler: options.redirectHandler ?? configuration.redirectHandler ?? .follow,
                    retryStrategy: options.retryStrategy ?? configuration.retryStrategy))
        }
        if let (job, id) = subscription { task.joined(job, id: id) }
    }

    /// Queues the network task of new job `job` (made by a caller at `priority`), or hands it
    /// straight to a worker when a slot is free and nothing waits. A queued task follows its job's
    /// priority as callers come, go and change theirs; a running one is not affected.
    private func schedule(_ job: DownloadJob, priority: DownloadPriority, settings: TransferSettings) {
        let key = job.key
        var starts: [WorkerStart] = []
        var direct: WorkerStart?
        state.withLock { state in
            state.nextID += 1
            let task = NetworkTask(id: state.nextID, request: key, settings: settings, job: job, priority: priority)
            state.tasks[key] = task
            if state.queued == 0 && state.running < max(1, configuration.maximumConcurrentDownloads) {
                // A free slot and nothing waiting: straight to a worker, not through the queue.
                direct = startWorker(with: task, &state)
            } else {
                state.queue.push(id: task.id, request: key, priority: task.priority)
                state.queued += 1
                starts = startQueued(&state)
            }
        }
        job.setStep(.network(self, job))
        // A caller may have joined or changed its priority before the observer was set: the
        // priority the observer starts from says (one more lock only then).
        if direct == nil, job.observePriority({ [self] _ in reprioritise(job) }) != priority {
            reprioritise(job)
        }
        if let direct { launch(direct) }
        launch(starts)
    }

    /// Stops the network task of `job`, whose last caller left: a queued task leaves the queue; a
    /// running one is cancelled and frees its slot when its Swift task has wound down.
    func stop(_ job: DownloadJob) {
        state.withLock { state in
            guard let task = state.tasks[job.key], task.job === job else { return }
            state.tasks[job.key] = nil
            if let worker = task.worker { stopWorker(worker, &state) } else { state.queued -= 1 }
        }
    }

    /// Queues a still-queued task again at its new place when its job's priority changed (a
    /// caller came, left or changed priority); its old entry is skipped as stale.
    func reprioritise(_ job: DownloadJob) {
        state.withLock { state in
            guard let task = state.tasks[job.key], task.job === job, task.worker == nil else { return }
            // Read under the downloader's lock: observers may be told of two changes out of order.
            let priority = job.priority
            guard priority != task.priority else { return }
            state.tasks[job.key]!.priority = priority
            state.queue.push(id: task.id, request: job.key, priority: priority)
        }
    }
}
