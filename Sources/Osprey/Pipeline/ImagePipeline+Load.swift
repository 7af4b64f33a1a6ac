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

    /// ``load(_:downloader:options:progress:completion:)`` awaited, through the downloader's own
    /// async forms (they stop the download when the calling task is cancelled).
    func load(_ source: ImageSource, downloader: ImageDownloader, options: DownloadOptions) async throws(OspreyError) -> DownloadResult {
        if let offline = offlineFailure(source) { throw offline }
        do {
            switch source {
            case .network(let resource): return try await downloader.download(resource.url, options: options)
            case .provider(let provider): return try await downloader.download(provider: provider, options: options)
            }
        } catch {
            throw OspreyError.wrapping(error, source: source)
        }
    }
}
