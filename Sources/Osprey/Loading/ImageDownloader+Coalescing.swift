import Foundation

/// Download coalescing: a caller whose final request (after its request modifiers) equals a queued
/// or running one joins that network task instead of starting another (``register(_:request:checkURL:options:progress:completion:)``);
/// a caller that cancels leaves it, and the last one to leave cancels the network task or takes
/// it out of the queue (``cancel(token:)``).
extension ImageDownloader {
    /// Starts `task`: checks the failed-URL list and the scheme, runs the request modifiers, then registers it.

    func start(_ task: DownloadTask, options: DownloadOptions, progress: ProgressHandler?, completion: @escaping Completion) {
        let url = task.url
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
            register(task, request: modified, checkURL: !modifiers.isEmpty, options: options, progress: progress, completion: completion)
        } else {
            Task {
                var modified: DownloadRequest? = request
                for modifier in modifiers {
                    guard let current = modified else { break }
                    modified = await modifier.modify(current)
                }
                register(task, request: modified, checkURL: true, options: options, progress: progress, completion: completion)
            }
        }
    }

    /// Queues `request` for `task`; `checkURL` when request modifiers may have changed its URL.
    func register(
        _ task: DownloadTask, request: DownloadRequest?, checkURL: Bool, options: DownloadOptions,
        progress: ProgressHandler?, completion: @escaping Completion
    ) {
        let token = task.token
        if checkURL, let request, !Self.isSupported(request.url) {
            let error = OspreyError.download(.invalidURL(request.url.absoluteString))
            return options.callbackQueue.execute { completion(.failure(error)) }
        }
        let settings = TransferSettings(
            redirectHandler: options.redirectHandler ?? configuration.redirectHandler ?? .follow,
            retryStrategy: options.retryStrategy ?? configuration.retryStrategy)
        // Hashed once, outside the lock.
        let key = request.map(RequestKey.init)
        var starts: [WorkerStart] = []
        var direct: WorkerStart?
        let registered: Bool = state.withLock { state in
            guard let request = key, !task.isCancelled else { return false }
            let caller = Caller(task: task, options: options, priority: task.priority, progress: progress, completion: completion)
            if progress != nil { progressCallers.add(1, ordering: .relaxed) }
            if options.bodyObserver != nil { bodyObservers.add(1, ordering: .relaxed) }
            state.keysByToken[token] = request
            if let before = state.tasks[request]?.priority {
                state.tasks[request]!.callers.append(caller)
                requeueIfReprioritised(&state, request, from: before)
            } else {
                state.nextID += 1
                state.tasks[request] = NetworkTask(id: state.nextID, request: request, settings: settings, caller: caller)
                if state.queued == 0 && state.running < max(1, configuration.maximumConcurrentDownloads) {
                    // A free slot and nothing waiting: straight to a worker, not through the queue.
                    direct = startWorker(with: state.tasks[request]!, &state)
                } else {
                    state.queue.push(id: state.nextID, request: request, priority: caller.priority)
                    state.queued += 1
                    starts = startQueued(&state)
                }
            }
            return true
        }
        if let direct { launch(direct) }
        launch(starts)
        guard !registered else { return }
        let error: OspreyError = task.isCancelled ? .download(.cancelled(token: token)) : .download(.emptyRequest(url: task.url))
        options.callbackQueue.execute { completion(.failure(error)) }
    }

    /// Removes the caller of `token` from its network task; the last caller to leave stops the task.
    func cancel(token: DownloadToken) {
        let removed: Caller? = state.withLock { state in
            guard let key = state.keysByToken.removeValue(forKey: token), var task = state.tasks[key],
                let index = task.callers.firstIndex(where: { $0.task.token == token })
            else { return nil }
            let caller = task.callers.remove(at: index)
            if caller.progress != nil { progressCallers.subtract(1, ordering: .relaxed) }
            if caller.options.bodyObserver != nil { bodyObservers.subtract(1, ordering: .relaxed) }
            if task.callers.isEmpty {
                // Last caller: a queued task leaves the queue; a running one is cancelled and frees
                // its slot when its Swift task has wound down.
                state.tasks[key] = nil
                if let worker = task.worker { stopWorker(worker, &state) } else { state.queued -= 1 }
            } else {
                let before = state.tasks[key]!.priority
                state.tasks[key] = task
                requeueIfReprioritised(&state, key, from: before)
            }
            return caller
        }
        if let removed {
            removed.options.callbackQueue.execute {
                removed.completion(.failure(.download(.cancelled(token: token))))
            }
        }
    }
}
