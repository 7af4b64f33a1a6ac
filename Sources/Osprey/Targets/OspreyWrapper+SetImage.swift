import Foundation

/// Target-only settings of ``OspreyWrapper/setImage(with:placeholder:options:settings:pipeline:progress:completion:)``.
public struct TargetLoadSettings: Sendable {
    /// Keep the target's current image instead of showing the placeholder while loading
    /// (Kingfisher's `keepCurrentImageWhileLoading`). Default `false`.
    public var keepCurrentImageWhileLoading: Bool
    /// Shown when the request fails (not when it is cancelled). Default `nil`: leave the target as it is.
    public var failureImage: Image?
    /// Shown while the request runs. Default `nil`.
    public var indicator: (any ImageIndicator)?
    /// Used instead of a plain set for images not from the memory cache. Default `nil`.
    public var transition: ImageTransition?
    /// Let a previous request for the same operation key run on (its result is still never
    /// applied). Default `false`: a new call cancels the previous load.
    public var keepsPreviousLoad: Bool
    /// Separates independent images of one target (SDWebImage's `setImageOperationKey`), e.g. an
    /// avatar and a banner on one view model. Default `"image"`.
    public var operationKey: String

    /// Settings; every argument has the default documented on its property.
    public init(
        keepCurrentImageWhileLoading: Bool = false, failureImage: Image? = nil, indicator: (any ImageIndicator)? = nil,
        transition: ImageTransition? = nil, keepsPreviousLoad: Bool = false, operationKey: String = "image"
    ) {
        self.keepCurrentImageWhileLoading = keepCurrentImageWhileLoading
        self.failureImage = failureImage
        self.indicator = indicator
        self.transition = transition
        self.keepsPreviousLoad = keepsPreviousLoad
        self.operationKey = operationKey
    }
}

extension OspreyWrapper {
    /// Loads `source` into the target (Kingfisher's `kf.setImage`).
    ///
    /// Sets `placeholder` at once (unless ``TargetLoadSettings/keepCurrentImageWhileLoading`` and
    /// the target has an image), cancels the target's previous load for the same operation key
    /// (unless ``TargetLoadSettings/keepsPreviousLoad``), and applies the result only if this is
    /// still the target's latest request: an older result completes with
    /// ``OspreyError/PipelineReason/notCurrentSourceTask(source:)`` and changes nothing. A `nil`
    /// source sets the placeholder and completes with ``OspreyError/PipelineReason/emptySource``.
    /// The target is held weakly: a released target's result is dropped.
    ///
    /// - Parameters:
    ///   - source: what to load; `nil` sets the placeholder and loads nothing.
    ///   - placeholder: set at once while the image loads. Default `nil` (nothing set).
    ///   - options: per-call pipeline options (see ``OspreyOption``). Default none.
    ///   - settings: target settings. Default ``TargetLoadSettings/init(keepCurrentImageWhileLoading:failureImage:indicator:transition:keepsPreviousLoad:operationKey:)`` defaults.
    ///   - pipeline: the pipeline to load with. Default ``ImagePipeline/shared``.
    ///   - progress: called with the bytes received and expected while downloading. Default `nil`.
    ///   - completion: called on the options' callback queue; with ``CachePolicy/revalidate``
    ///     possibly twice. Default `nil`.
    /// - Returns: the request's task, or `nil` for a `nil` source.
    @discardableResult
    public func setImage(
        with source: ImageSource?, placeholder: Image? = nil, options: [OspreyOption] = [],
        settings: TargetLoadSettings = TargetLoadSettings(), pipeline: ImagePipeline = .shared,
        progress: (@Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        completion: (@Sendable (Result<ImageResult, OspreyError>) -> Void)? = nil
    ) -> ImageTask? {
        let target = base
        let key = settings.operationKey
        let showPlaceholder: @Sendable (any ImageTarget) -> Void = { target in
            if !(settings.keepCurrentImageWhileLoading && target.image != nil) { target.image = placeholder }
        }
        guard let source else {
            let (task, indicator) = TargetRegistry.shared.cancel(target, key: key)
            task?.cancel()
            indicator?.stopAnimating()
            showPlaceholder(target)
            let queue = pipeline.resolvedOptions(options).callbackQueue
            if let completion { queue.execute { completion(.failure(.pipeline(.emptySource))) } }
            return nil
        }
        let resolved = pipeline.resolvedOptions(options)
        let synchronousHit = resolved.diskLookup == .synchronous ? pipeline.synchronousCachedImage(for: source, options: resolved) : nil
        let (identifier, previous, previousIndicator) = TargetRegistry.shared.begin(target, key: key, indicator: settings.indicator) { target in
            if let synchronousHit { target.image = synchronousHit.image } else { showPlaceholder(target) }
        }
        if !settings.keepsPreviousLoad { previous?.cancel() }
        previousIndicator?.stopAnimating()
        if let synchronousHit {
            _ = TargetRegistry.shared.endIfCurrent(target, key: key, identifier: identifier, finish: true)
            let result = ImageResult(
                image: synchronousHit.image, cacheType: synchronousHit.cacheType, source: source, originalSource: source)
            if let completion { resolved.callbackQueue.execute { completion(.success(result)) } }
            return ImageTask(completed: true)
        }
        settings.indicator?.startAnimating()
        let objectID = ObjectIdentifier(target)
        let task = pipeline.loadImage(with: source, options: options, progress: progress) { [weak target] result in
            guard let target else {
                TargetRegistry.shared.removeIfReleased(objectID)
                completion?(.failure(.pipeline(.notCurrentSourceTask(source: source.description))))
                return
            }
            // With refresh-cached a cached first result may be followed by a refreshed one.
            let value = try? result.get()
            let awaitsRefresh = resolved.cachePolicy == .revalidate && value != nil && value?.cacheType != CacheType.none && value?.isRefresh == false
            TargetRegistry.shared.applyIfCurrent(
                target, key: key, identifier: identifier, finish: !awaitsRefresh,
                { target in
                    switch result {
                    case .success(let value):
                        if let transition = settings.transition, value.cacheType != .memory || transition.forced {
                            transition.apply(target, value.image)
                        } else {
                            target.image = value.image
                        }
                    case .failure(let error):
                        if !error.isCancellation, let failureImage = settings.failureImage { target.image = failureImage }
                    }
                },
                then: { applied in
                    guard applied else {
                        completion?(.failure(.pipeline(.notCurrentSourceTask(source: source.description))))
                        return
                    }
                    settings.indicator?.stopAnimating()
                    completion?(result)
                })
        }
        TargetRegistry.shared.attach(task, to: target, key: key, identifier: identifier)
        return task
    }

    /// Cancels the target's running load for `operationKey` (default `"image"`); its completion
    /// gets ``OspreyError/PipelineReason/notCurrentSourceTask(source:)`` and nothing is applied.
    public func cancelDownloadTask(operationKey: String = "image") {
        let (task, indicator) = TargetRegistry.shared.cancel(base, key: operationKey)
        task?.cancel()
        indicator?.stopAnimating()
    }

    /// Whether a load is running for `operationKey` (default `"image"`).
    public func isLoading(operationKey: String = "image") -> Bool {
        TargetRegistry.shared.currentIdentifier(base, key: operationKey) != nil
    }
}

extension ImagePipeline {
    /// The processed image from memory, else, with ``DiskLookup/synchronous``,
    /// read from the disk cache on this thread (decoded here, then put in memory); with the cache
    /// it came from.
    func synchronousCachedImage(for source: ImageSource, options: OspreyOptions) -> (image: Image, cacheType: CacheType)? {
        if let image = memoryImage(source, options: options) { return (image, .memory) }
        guard options.diskLookup == .synchronous, options.cachePolicy.readsDisk else { return nil }
        let cache = options.targetCache ?? configuration.cache
        let key = cacheKey(for: source)
        let identifier = options.processor.identifier
        // The storage's own read: its files carry a trailer after the bytes.
        guard let data = cache.diskStorage.valueNow(forKey: ImageCache.computedKey(key, processorIdentifier: identifier), extendingExpiration: nil),
            let image = try? configuration.decoder.decode(data, options: options.decodingOptions)
        else { return nil }
        _ = try? cache.memoryStorage.store(
            image, forKey: ImageCache.computedKey(key, processorIdentifier: identifier), cost: image.cost,
            expiration: options.memoryCacheExpiration)
        return (options.imageModifier?(image) ?? image, .disk)
    }
}
