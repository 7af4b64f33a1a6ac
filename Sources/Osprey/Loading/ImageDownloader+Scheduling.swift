import Foundation

extension ImageDownloader {
    // MARK: - Registration and scheduling

    func start(_ task: DownloadTask, options: DownloadOptions, progress: ProgressHandler?, completion: @escaping Completion) {
        let url = task.url
        let fail: @Sendable (OspreyError) -> Void = { error in options.callbackQueue.execute { completion(.failure(error)) } }
        if !options.retryFailed, isBlacklisted(url) {
            return fail(.download(.blacklisted(url: url)))
        }
        guard Self.isSupported(url) else {
            if configuration.blacklistsFailedURLs { state.withLock { _ = $0.blacklist.insert(url.absoluteString) } }
            return fail(.download(.invalidURL(url.absoluteString)))
        }
        let request = makeRequest(url, options: options)
        let modifiers = [configuration.requestModifier, options.requestModifier].compactMap { $0 }
        if modifiers.allSatisfy(\.isSynchronous) {
            var modified: DownloadRequest? = request
            for modifier in modifiers { modified = modified.flatMap(modifier.modifySync) }
            register(task, request: modified, options: options, progress: progress, completion: completion)
        } else {
            Task {
                var modified: DownloadRequest? = request
                for modifier in modifiers {
                    guard let current = modified else { break }
                    modified = await modifier.modify(current)
                }
                register(task, request: modified, options: options, progress: progress, completion: completion)
            }
        }
    }

    func register(_ task: DownloadTask, request: DownloadRequest?, options: DownloadOptions,
                          progress: ProgressHandler?, completion: @escaping Completion) {
        let token = task.token
        if let request, !Self.isSupported(request.url) {
            let error = OspreyError.download(.invalidURL(request.url.absoluteString))
            return options.callbackQueue.execute { completion(.failure(error)) }
        }
        let registered: Bool = state.withLock { state in
            guard let request, !task.isCancelled else { return false }
            let caller = Caller(task: task, options: options, priority: task.priority, progress: progress, completion: completion)
            state.keysByToken[token] = request
            if let before = state.tasks[request]?.priority {
                state.tasks[request]!.callers.append(caller)
                requeueIfReprioritised(&state, request, from: before)
            } else {
                state.nextID += 1
                state.tasks[request] = NetworkTask(id: state.nextID, request: request,
                                                   settings: TransferSettings(redirectHandler: options.redirectHandler ?? configuration.redirectHandler ?? .follow,
                                                                              retryStrategy: options.retryStrategy ?? configuration.retryStrategy),
                                                   caller: caller)
                state.queue.push(id: state.nextID, request: request, priority: caller.priority)
                state.queued += 1
                startQueued(&state)
            }
            return true
        }
        guard !registered else { return }
        let error: OspreyError = task.isCancelled ? .download(.cancelled(token: token)) : .download(.emptyRequest(url: task.url))
        options.callbackQueue.execute { completion(.failure(error)) }
    }

    /// Queues a still-queued task again at its new place when its priority changed (a caller came,
    /// left or changed priority); its old entry is skipped as stale. Called with the lock held.
    func requeueIfReprioritised(_ state: inout State, _ key: DownloadRequest, from before: DownloadPriority) {
        guard let task = state.tasks[key], task.handle == nil, task.priority != before else { return }
        state.queue.push(id: task.id, request: key, priority: task.priority)
    }

    /// Starts queued tasks while slots are free, highest priority first. Called with the lock held.
    /// Stale queue entries (a task that left the queue, or was queued again at another priority)
    /// are skipped; when they outnumber the live ones, the queue is compacted.
    func startQueued(_ state: inout State) {
        while state.running < max(1, configuration.maximumConcurrentDownloads), let entry = state.queue.pop() {
            guard let next = state.tasks[entry.request], next.id == entry.id, next.handle == nil,
                  next.priority == entry.priority else { continue }
            state.running += 1
            state.queued -= 1
            let id = next.id, request = next.request, settings = next.settings
            state.tasks[request]!.handle = Task(priority: next.priority.taskPriority) {
                await self.run(id: id, request: request, settings: settings)
            }
        }
        if state.queue.count > 2 * state.queued + 64 {
            let tasks = state.tasks
            state.queue.compact { entry in
                guard let task = tasks[entry.request] else { return false }
                return task.id == entry.id && task.handle == nil && task.priority == entry.priority
            }
        }
    }

    /// Ends network task `id`: frees its slot, updates the failed-URL list, delivers to its callers.
    func finish(id: UInt64, request: DownloadRequest, outcome: Result<Fetched, OspreyError>, metrics: DownloadMetrics) {
        let callers: [Caller] = state.withLock { state in
            state.running -= 1
            var callers: [Caller] = []
            if let task = state.tasks[request], task.id == id {
                callers = task.callers
                state.tasks[request] = nil
                for caller in callers { state.keysByToken[caller.task.token] = nil }
            }
            switch outcome {
            case .success:
                state.blacklist.remove(request.url.absoluteString)
            case .failure(let error):
                if configuration.blacklistsFailedURLs, Self.isPermanent(error) {
                    state.blacklist.insert(request.url.absoluteString)
                }
            }
            startQueued(&state)
            return callers
        }
        emit(.didFinish(url: request.url, result: outcome.map(\.response), metrics: metrics))
        for caller in callers {
            caller.options.callbackQueue.execute {
                caller.completion(Self.result(outcome, metrics: metrics, for: caller.options, url: request.url))
            }
        }
    }

    func reportProgress(id: UInt64, request: DownloadRequest, received: Int, expected: Int?) {
        let handlers = state.withLock { state -> [(CallbackQueue, ProgressHandler)] in
            guard let task = state.tasks[request], task.id == id else { return [] }
            return task.callers.compactMap { caller in caller.progress.map { (caller.options.callbackQueue, $0) } }
        }
        for (queue, handler) in handlers { queue.execute { handler(received, expected) } }
    }
}
