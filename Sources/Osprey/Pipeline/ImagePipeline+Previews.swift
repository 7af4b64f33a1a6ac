import Foundation

/// Progressive previews (``ProgressiveJPEG``): a request that asks for them listens to the
/// previews of its download, which a ``ProgressivePreviewer`` makes once for every request
/// coalesced on that download (``PreviewRegistry``).
extension ImagePipeline {
    /// Previews, then the final image, for `source` (the final image alone for a cache hit, a
    /// source that is not a progressive JPEG, or without ``RequestOption/progressiveJPEG(_:)`` in
    /// `items` or the pipeline's default options). Each preview has ``ImageResult/isPreview`` set
    /// and the final image's size; the stream ends after the final image, or throws the
    /// request's ``OspreyError``. No preview follows the final image. Cancelling the task that
    /// reads it cancels the request and its previews. The images of
    /// ``imageTask(for:options:)``'s ``ImageTask/events`` (with ``CachePolicy/revalidate``, a newer image may follow).
    ///
    /// ```swift
    /// for try await result in pipeline.images(for: .url(url), options: [.progressiveJPEG()]) {
    ///     show(result.image)
    /// }
    /// ```
    public func images(for source: ImageSource, options items: [RequestOption] = []) -> AsyncThrowingStream<ImageResult, any Error> {
        let events = imageTask(for: source, options: items).events
        return AsyncThrowingStream { continuation in
            let task = Task {
                for await event in events {
                    switch event {
                    case .preview(let result), .finished(.success(let result)): continuation.yield(result)
                    case .finished(.failure(let error)): return continuation.finish(throwing: error)
                    case .progress: continue
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Attaches `deliver` to the previews of the download `fetchKey` names, when `request`'s
    /// options ask for previews of a network source whose bytes are decoded as they come (no
    /// response data modifier). `nil`: no previews for this request.
    func attachPreviews(
        _ request: ResolvedRequest, fetchKey: HashedKey<FetchJobKey>,
        deliver: @escaping @Sendable (Image, PreviewInfo) -> Void
    ) -> PreviewRegistry.Attachment? {
        let options = request.options
        guard let settings = options.progressiveJPEG, settings.isEnabled, case .network = request.source,
            options.responseDataModifier == nil, options.cachePolicy != .cacheOnly
        else { return nil }
        let processors = Self.stages(of: options.processor)
        let plan = DecodePlan(processors: processors, decoding: options.decodingOptions)
        let queue = processingPlace(options)
        return previews.attach(
            fetchKey,
            make: {
                ProgressivePreviewer(
                    settings: settings, decoder: configuration.decoder, decoding: options.decodingOptions, queue: queue,
                    logger: configuration.logger, key: request.key)
            },
            listener: { id in
                ProgressivePreviewer.Listener(
                    id: id, processorIdentifier: request.processorIdentifier, processors: processors, plan: plan, deliver: deliver)
            })
    }
}
