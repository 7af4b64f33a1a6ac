import Foundation

extension ImageDownloader {
    // MARK: - Scheduling

    /// Whether `outcome` changes the failed-URL list: a success while the list has entries, a
    /// permanent failure.
    func needsRecord(_ outcome: Result<Fetched, OspreyError>) -> Bool {
        switch outcome {
        case .success: failedURLCount.load(ordering: .relaxed) > 0
        case .failure(let error): configuration.remembersFailedURLs && Self.isPermanent(error)
        }
    }

    /// Updates the failed-URL list with the outcome of a download of `url`. Called with the lock held.
    func record(_ outcome: Result<Fetched, OspreyError>, url: URL, _ state: inout State) {
        switch outcome {
        case .success:
            if !state.failedURLs.isEmpty {
                updateFailedURLList(&state) { $0.remove(url.absoluteString) }
            }
        case .failure(let error):
            if configuration.remembersFailedURLs, Self.isPermanent(error) {
                updateFailedURLList(&state) { $0.insert(url.absoluteString) }
            }
        }
    }

    /// Assigns a new worker to each free slot while tasks are queued; the caller launches them
    /// (``launch(_:)``) once it has released the lock. Called with the lock held.
    /// When stale queue entries (see ``popQueued(_:)``) outnumber the live ones, the queue is compacted.
    func startQueued(_ state: inout State) -> [WorkerStart] {
        var starts: [WorkerStart] = []
        while state.running < max(1, configuration.maximumConcurrentDownloads), let next = popQueued(&state) {
            starts.append(startWorker(with: next, &state))
        }
        if state.queue.count > 2 * state.queued + 64 {
            let tasks = state.tasks
            state.queue.compact { entry in
                guard let task = tasks[entry.request] else { return false }
                return task.id == entry.id && task.worker == nil && task.priority == entry.priority
            }
        }
        return starts
    }

    /// Takes a slot for a new worker and hands it `task`. Called with the lock held.
    func startWorker(with task: NetworkTask, _ state: inout State) -> WorkerStart {
        state.running += 1
        state.nextWorkerID += 1
        let worker = state.nextWorkerID
        state.workers[worker] = WorkerHandle()
        return WorkerStart(worker: worker, first: assign(task, to: worker, &state), priority: task.priority)
    }

    /// Starts the workers `startQueued` assigned, outside the lock.
    func launch(_ starts: [WorkerStart]) {
        for start in starts { launch(start) }
    }

    /// Starts a worker, outside the lock. It runs on the calling thread while its transfers
    /// finish at once (``finishImmediately(_:worker:)``: `file:` and `data:` URLs), with no Swift
    /// task; the first transfer that needs waiting starts the worker's task
    /// (``startTask(_:first:priority:)``).
    func launch(_ start: WorkerStart) {
        var next: Transfer? = start.first
        while let job = next {
            switch finishImmediately(job, worker: start.worker) {
            case .next(let following):
                next = following
            case .wait(let job):
                startTask(start.worker, first: job, priority: start.priority)
                next = nil
            }
        }
    }

    /// Starts `worker`'s Swift task with `first`. It starts at once on the calling thread
    /// (`Task.immediate`) and runs until its first suspension.
    private func startTask(_ worker: UInt64, first: Transfer, priority: DownloadPriority) {
        let task = Task.immediate(priority: priority.taskPriority) {
            await self.work(worker: worker, first: first)
        }
        let cancelNow = state.withLock { state -> Bool in
            // The worker may have ended already (it ran to completion before this).
            guard state.workers[worker] != nil else { return false }
            state.workers[worker]!.task = task
            return state.retired.contains(worker)
        }
        // Stopped (timeout or cancellation) before its task was stored.
        if cancelNow { task.cancel() }
    }

    /// Takes the queued task that goes next (highest priority first) off the queue. Stale entries
    /// (a task that left the queue, or was queued again at another priority) are skipped.
    /// Called with the lock held.
    func popQueued(_ state: inout State) -> NetworkTask? {
        while let entry = state.queue.pop() {
            guard let next = state.tasks[entry.request], next.id == entry.id, next.worker == nil,
                next.priority == entry.priority
            else { continue }
            state.queued -= 1
            return next
        }
        return nil
    }

    /// Hands queued task `task` to `worker`. (Its deadline starts when it turns out to need
    /// waiting: ``finishImmediately(_:worker:)``.) Called with the lock held.
    func assign(_ task: NetworkTask, to worker: UInt64, _ state: inout State) -> Transfer {
        state.tasks[task.request]!.worker = worker
        return Transfer(id: task.id, request: task.request, settings: task.settings, job: task.job)
    }

    /// Stops the network task `worker` runs by cancelling the worker's Swift task; the worker ends
    /// after that transfer (a cancelled Swift task cannot run another). Called with the lock held.
    func stopWorker(_ worker: UInt64, _ state: inout State) {
        guard state.retired.insert(worker).inserted else { return }
        state.workers[worker]?.task?.cancel()
    }

    /// A worker's Swift task: runs `first`, then queued transfers while there are any and it
    /// was not stopped.
    func work(worker: UInt64, first: Transfer) async {
        var next = await run(first, worker: worker)
        while let job = next {
            switch finishImmediately(job, worker: worker) {
            case .next(let following): next = following
            case .wait(let job): next = await run(job, worker: worker)
            }
        }
    }

    /// Ends network task `id`: updates the failed-URL list, delivers to its callers (unless they
    /// all left), and hands `worker` the next queued task (or ends the worker, freeing its slot).
    /// A failure of a task whose deadline passed is reported as a timeout.
    func finish(
        id: UInt64, request: RequestKey, outcome: Result<Fetched, OspreyError>, metrics: DownloadMetrics,
        worker: UInt64
    ) -> Transfer? {
        var finalOutcome = outcome
        var starts: [WorkerStart] = []
        let (job, next): (DownloadJob?, Transfer?) = state.withLock { state in
            if state.deadlines.removeValue(forKey: id)?.timedOut == true, case .failure = outcome {
                let (seconds, attoseconds) = timeout(of: request.request).components
                finalOutcome = .failure(.download(.timeout(url: request.request.url, seconds: Double(seconds) + Double(attoseconds) / 1e18)))
            }
            var job: DownloadJob?
            if let task = state.tasks[request], task.id == id {
                job = task.job
                state.tasks[request] = nil
            }
            record(outcome, url: request.request.url, &state)
            if !state.retired.contains(worker), let queued = popQueued(&state) {
                return (job, assign(queued, to: worker, &state))
            }
            state.retired.remove(worker)
            state.workers[worker] = nil
            state.running -= 1
            starts = startQueued(&state)
            return (job, nil)
        }
        let outcome = finalOutcome
        emit(.didFinish(url: request.request.url, result: outcome.map(\.response), metrics: metrics))
        job?.finish(outcome.map { Transferred(fetched: $0, metrics: metrics, url: request.request.url) })
        launch(starts)
        return next
    }

    /// Tells the callers of `job` how far its body has come: the progress handlers (each on its
    /// caller's callback queue) and the body observers (``DownloadOptions/bodyObserver``, on this
    /// thread). One lock of the job per chunk; nothing more while no caller has either (a caller
    /// with a body observer subscribes with a progress handler, see ``register(_:request:checkURL:)``).
    func reportChunk(_ job: DownloadJob, body: Data, expected: Int?) {
        job.progressReceivers?.forEach { subscriber in
            subscriber.progress?(body.count, expected)
            if let observe = (subscriber.owner as? DownloadTask)?.options.bodyObserver { observe(body, expected) }
        }
    }
}
