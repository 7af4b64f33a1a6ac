import Foundation

/// Download coalescing: a caller whose final request (after its request modifiers) equals a queued
/// or running one joins that network task's job instead of starting another
/// (``register(_:request:checkURL:completion:)``); a caller that cancels leaves it
/// (``DownloadTask/cancel()``), and the last one to leave stops the network task
/// (``stop(_:)``: out of the queue, or its worker cancelled).
extension ImageDownloader {
    /// Starts `task`: checks the failed-URL list and the scheme, runs the request modifiers, then registers it.
    /// (The task's fields are read in place here and in ``register(_:request:checkURL:)``: a copy
    /// of its whole options retains each of their fields, per download.)
    func start(_ task: DownloadTask) {
        let url = task.url
        if !task.options.retryFailed, isOnFailedURLList(url) {
            return task.deliver(.failure(.download(.previouslyFailed(url: url))))
        }
        guard Self.isSupported(url) else {
            addToFailedURLList(url)
            return task.deliver(.failure(.download(.invalidURL(url.absoluteString))))
        }
        let request = makeRequest(url, options: task.options)
        guard configuration.requestModifier != nil || task.options.requestModifier != nil else {
            return register(task, request: request, checkURL: false)
        }
        let modifiers = [configuration.requestModifier, task.options.requestModifier].compactMap { $0 }
        if modifiers.allSatisfy(\.isSynchronous) {
            var modified: DownloadRequest? = request
            for modifier in modifiers { modified = modified.flatMap(modifier.modifySync) }
            register(task, request: modified, checkURL: true)
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
        if checkURL, let request, !Self.isSupported(request.url) {
            let error = OspreyError.download(.invalidURL(request.url.absoluteString))
            return task.deliver(.failure(error))
        }
        guard let request, !task.isCancelled else {
            let error: OspreyError =
                task.isCancelled ? .download(.cancelled(url: task.url)) : .download(.emptyRequest(url: task.url))
            return task.deliver(.failure(error))
        }
        // Hashed once.
        let key = RequestKey(request)
        // A caller with a body observer is told of chunks only as a progress receiver of the job:
        // it subscribes with a handler even without a progress handler of its own.
        var progress: JobProgressHandler?
        if let handler = task.progress {
            if case .dispatch(let queue) = task.options.callbackQueue {
                progress = { received, expected in queue.async { handler(received, expected) } }
            } else {
                progress = handler
            }
        } else if task.options.bodyObserver != nil {
            progress = { _, _ in }
        }
        let priority = task.priority
        // The caller's delivery (its data modifier, on its callback queue) captures the task
        // alone. Written as the argument itself, the closure is made at the job table's generic
        // abstraction: declared first with its concrete type, it was wrapped in a reabstraction
        // thunk, one more allocation per download.
        let subscription = jobs.subscribe(
            key, priority: priority, owner: task, progress: progress, completion: { [task] outcome in task.deliver(outcome) }
        ) { job in
            schedule(
                job, priority: priority,
                settings: TransferSettings(
                    redirectHandler: task.options.redirectHandler ?? configuration.redirectHandler ?? .follow,
                    retryStrategy: task.options.retryStrategy ?? configuration.retryStrategy))
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
