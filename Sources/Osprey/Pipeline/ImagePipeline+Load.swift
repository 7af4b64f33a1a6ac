/// The one place a source is loaded (``RetrieveStep/load``): by the fetch stage, the revalidation
/// and the data stage.
extension ImagePipeline {
    /// Downloads a network source (conditionally when `options` carry a validator) or reads its
    /// provider with `downloader`, and calls `completion` once with the bytes or the error; while
    /// the network is unavailable (``handleNetworkChange(available:metered:)``) a network source
    /// fails at once with ``OspreyError/DownloadReason/offline(url:)``, connecting nowhere.
    /// Returns the step that stops it (record it where cancellation finds it).
    func load(
        _ source: ImageSource, downloader: ImageDownloader, options: DownloadOptions, progress: JobProgressHandler?,
        completion: @escaping @Sendable (Result<DownloadResult, OspreyError>) -> Void
    ) -> PendingStep {
        if let offline = offlineFailure(source) { return .startingTask { completion(.failure(offline)) } }
        switch source {
        case .network(let resource):
            return .download(downloader.download(resource.url, options: options, progress: progress, completion: completion))
        case .provider(let provider):
            return .startingTask {
                do {
                    completion(.success(try await downloader.download(provider: provider, options: options)))
                } catch {
                    completion(.failure(OspreyError.wrapping(error, source: source)))
                }
            }
        }
    }

    /// ``load(_:downloader:options:progress:completion:)`` awaited. Cancelling the calling task stops the load.
    func load(_ source: ImageSource, downloader: ImageDownloader, options: DownloadOptions) async throws(OspreyError) -> DownloadResult {
        let state = Locked<(step: PendingStep?, cancelled: Bool)>((nil, false))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DownloadResult, OspreyError>, Never>) in
                let step = load(source, downloader: downloader, options: options, progress: nil) { continuation.resume(returning: $0) }
                // A cancellation that came before the step was recorded stops it here.
                if state.withLock({ state in
                    state.step = step
                    return state.cancelled
                }) {
                    step.cancel()
                }
            }
        } onCancel: {
            state.withLock { state in
                state.cancelled = true
                return state.step
            }?.cancel()
        }
        return try result.get()
    }
}
