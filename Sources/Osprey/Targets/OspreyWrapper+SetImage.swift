import Foundation

extension OspreyWrapper {
    /// Loads `source` into the widget (Kingfisher's `kf.setImage`), on the main actor.
    ///
    /// Ends the widget's previous request first (its result is never shown). A memory-cache hit
    /// (and, with ``DiskLookup/synchronous``, a disk hit) is displayed before this
    /// returns, with no placeholder first and no transition (unless forced). Otherwise the
    /// placeholder is shown at once (unless ``TargetSettings/keepCurrentImageWhileLoading``
    /// and the widget shows something), the indicator starts, and the image is loaded, decoded,
    /// processed and turned into the widget's content off the main actor; back on the main actor,
    /// in one turn, the result is shown only if this is still the widget's latest request. A failure
    /// (not a cancellation) shows ``TargetSettings/failureImage``. With
    /// ``RequestOption/progressiveJPEG(_:)`` in the options, each progressive preview is made into
    /// content off the main actor and shown as it comes (never after the image), and the image
    /// then replaces the last preview without the transition. For a target whose
    /// ``ImageTarget/ospreyDecodesFramesOnDemand`` is `true` (OspreyGTK's `OspreyPicture`),
    /// a loaded animation comes as its first frame and a frame decoder
    /// (``RequestOption/animationFramesOnDemand(_:)``). A `nil` source shows the
    /// placeholder and completes with ``OspreyError/PipelineReason/emptySource``. The widget is
    /// held weakly: releasing it cancels the load.
    ///
    /// - Parameters:
    ///   - source: what to load; `nil` shows the placeholder and loads nothing.
    ///   - placeholder: shown while the image loads. Default `nil` (the widget is cleared).
    ///   - options: per-call pipeline options (see ``RequestOption``). Default none.
    ///   - settings: target settings. Default: ``TargetSettings`` defaults (sized to the
    ///     widget, a running download finishes into the cache on cancel).
    ///   - pipeline: the pipeline to load with. Default ``ImagePipeline/shared``.
    ///   - progress: bytes received and expected while downloading, on the main actor. Default `nil`.
    ///   - completion: called on the main actor, once per request (memory hits before this returns);
    ///     a replaced request gets ``OspreyError/PipelineReason/notCurrentSourceTask(source:)``. Default `nil`.
    /// - Returns: the request's task (already completed for a cache hit), or `nil` for a `nil` source.
    @discardableResult
    public func setImage(
        with source: ImageSource?, placeholder: Image? = nil, options: [RequestOption] = [],
        settings: TargetSettings<Base> = TargetSettings(), pipeline: ImagePipeline = .shared,
        progress: (@MainActor @Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        completion: (@MainActor @Sendable (Result<ImageResult, OspreyError>) -> Void)? = nil
    ) -> ImageTask? {
        load(
            source, placeholder: placeholder.map(Placeholder.image), options: options, settings: settings, pipeline: pipeline,
            progress: progress, completion: completion)
    }

    /// The `setImage` above with a
    /// ``Placeholder``: an image is shown at once as above; a ThumbHash or BlurHash
    /// (`placeholder: .thumbHash("3OcRJYB4d3h/iIeHeEh3eIhw+j2w")`) is decoded at the widget's pixel
    /// size (``ImageTarget/ospreyPixelSize``, or 32 pixels on the longer side when the
    /// size is unknown) on a background queue, never on the main actor, and shown as soon as it is
    /// ready, unless a preview or the image came first or the request was replaced. A malformed
    /// hash shows nothing (the load goes on). Memory hits show no placeholder.
    @discardableResult
    public func setImage(
        with source: ImageSource?, placeholder: Placeholder, options: [RequestOption] = [],
        settings: TargetSettings<Base> = TargetSettings(), pipeline: ImagePipeline = .shared,
        progress: (@MainActor @Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        completion: (@MainActor @Sendable (Result<ImageResult, OspreyError>) -> Void)? = nil
    ) -> ImageTask? {
        load(source, placeholder: placeholder, options: options, settings: settings, pipeline: pipeline, progress: progress, completion: completion)
    }

    /// The `setImage` above for a URL (``ImageSource/url(_:)``); a `nil` URL shows the
    /// placeholder and completes with ``OspreyError/PipelineReason/emptySource``.
    @discardableResult
    public func setImage(
        with url: URL?, placeholder: Image? = nil, options: [RequestOption] = [],
        settings: TargetSettings<Base> = TargetSettings(), pipeline: ImagePipeline = .shared,
        progress: (@MainActor @Sendable (_ received: Int, _ expected: Int?) -> Void)? = nil,
        completion: (@MainActor @Sendable (Result<ImageResult, OspreyError>) -> Void)? = nil
    ) -> ImageTask? {
        load(
            url.map(ImageSource.url), placeholder: placeholder.map(Placeholder.image), options: options, settings: settings,
            pipeline: pipeline, progress: progress, completion: completion)
    }

    /// The one load behind every `setImage`: returns the request's task (`nil` when none started).
    @discardableResult
    func load(
        _ source: ImageSource?, placeholder: Placeholder?, options: [RequestOption], settings: TargetSettings<Base>,
        pipeline: ImagePipeline, progress: (@MainActor @Sendable (_ received: Int, _ expected: Int?) -> Void)?,
        completion: (@MainActor @Sendable (Result<ImageResult, OspreyError>) -> Void)?
    ) -> ImageTask? {
        let target = base
        let controller = target.ospreyController
        let number = controller.begin(source)
        guard let source else {
            showPlaceholder(placeholder, number: number)
            completion?(.failure(.pipeline(.emptySource)))
            return nil
        }
        // A target that plays frame decoders asks for them first, so the caller's options win.
        let requested = Base.ospreyDecodesFramesOnDemand ? [RequestOption.animationFramesOnDemand(true)] + options : options
        let items = sizedOptions(requested, settings: settings, pipeline: pipeline)
        if settings.sizedToTarget, let size = base.ospreyPixelSize {
            var again = settings
            again.keepCurrentImageWhileLoading = true
            again.transition = nil
            controller.sizedRequest = (
                size.width, size.height,
                { [weak target] in
                    guard let target else { return }
                    OspreyWrapper(target).load(
                        source, placeholder: placeholder, options: options, settings: again, pipeline: pipeline, progress: nil,
                        completion: nil)
                }
            )
        }
        let resolved = pipeline.resolvedOptions(items)
        if let hit = pipeline.synchronousCachedImage(for: source, options: resolved) {
            let content = Base.makeContent(hit.image)
            controller.shown = .result
            if let transition = settings.transition, transition.forced, let content {
                transition.apply(target, content)
            } else {
                target.display(content)
            }
            if hit.cacheType == .disk {
                pipeline.variants.record(pipeline.memoryCacheKey(source, options: resolved), of: pipeline.cacheKey(for: source))
            }
            completion?(.success(ImageResult(image: hit.image, cacheType: hit.cacheType, source: source)))
            return ImageTask(completed: true)
        }
        let keys = (source: pipeline.cacheKey(for: source), computed: pipeline.memoryCacheKey(source, options: resolved))
        if let variant = cachedVariant(keys, options: resolved, settings: settings, pipeline: pipeline), let content = Base.makeContent(variant) {
            // Like a preview: the image replaces it plainly.
            controller.shown = .preview
            target.display(content)
        } else if !(settings.keepCurrentImageWhileLoading && target.ospreyHasContent) {
            showPlaceholder(placeholder, number: number)
        }
        let indicator = settings.indicator?(target)
        indicator?.startAnimating()
        let failure = settings.failureImage
        let transition = settings.transition
        let awaitsRefreshes = resolved.cachePolicy == .revalidate
        var onProgress: (@Sendable (Int, Int?) -> Void)?
        if let progress {
            onProgress = { received, expected in Task { @MainActor in progress(received, expected) } }
        }
        var onPreview: (@Sendable (ImageResult) -> Void)?
        if resolved.progressiveJPEG != nil {
            // Off the main actor like the result; shown only while nothing later was.
            onPreview = { [weak target] preview in
                guard let content = Base.makeContent(preview.image) else { return }
                let widget = target
                Task { @MainActor in
                    guard let target = widget, target.ospreyController.mayShow(.preview, for: number) else { return }
                    target.display(content)
                }
            }
        }
        let superseded = Superseded { completion?(.failure(.pipeline(.notCurrentSourceTask(source: source.description)))) }
        let task = pipeline.loadImage(with: source, options: items, progress: onProgress, preview: onPreview) { [weak target] result in
            // Off the main actor: the pixels become the widget's content here.
            let value = try? result.get()
            let content: Base.Content?
            switch result {
            case .success(let value): content = Base.makeContent(for: value)
            case .failure(let error): content = error.isCancellation ? nil : failure.flatMap(Base.makeContent)
            }
            if value != nil { pipeline.variants.record(keys.computed, of: keys.source) }
            let finish = !(awaitsRefreshes && value != nil && value?.cacheType != CacheType.none && value?.isRefresh == false)
            let widget = target
            Task { @MainActor in
                guard let target = widget, target.ospreyController.isCurrent(number, finish: finish) else {
                    superseded.tell()
                    return
                }
                // After a preview the image replaces it plainly (a fade would flash the widget empty).
                let afterPreview = target.ospreyController.shown == .preview
                if content != nil { target.ospreyController.shown = .result }
                if let value, let content, let transition, !afterPreview, value.cacheType != .memory || transition.forced {
                    transition.apply(target, content)
                } else if content != nil {
                    target.display(content)
                }
                completion?(result)
                if case .failure(let error) = result, error.isOffline {
                    OspreyWrapper(target).reloadWhenOnline(source, number: number, options: options, settings: settings, pipeline: pipeline)
                }
            }
        }
        controller.attach(
            task, number: number, indicator: indicator, finishesDownload: settings.finishesDownloadOnCancel, superseded: superseded.tell)
        return task
    }

    /// Cancels the widget's running load (see `ImageTargetController.cancel(finishingDownload:)`).
    public func cancelDownloadTask() {
        base.ospreyController.cancel()
    }

    /// Whether a load is running for the widget.
    public var isLoading: Bool { base.ospreyController.isLoading }

    /// `options` with a downsample to the widget's pixel size placed first in the processor chain,
    /// when ``TargetSettings/sizedToTarget`` is on and the widget knows its size.
    private func sizedOptions(_ options: [RequestOption], settings: TargetSettings<Base>, pipeline: ImagePipeline) -> [RequestOption] {
        guard settings.sizedToTarget, let size = base.ospreyPixelSize, size.width > 0, size.height > 0 else { return options }
        let downsample = ImageProcessors.Downsample(width: size.width, height: size.height)
        let current = pipeline.resolvedOptions(options).processor
        let processor: any ImageProcessing = current.identifier.isEmpty ? downsample : downsample.append(current)
        // The original bytes are kept on disk too (unless the options say otherwise), so a widget
        // allocated larger later decodes its new size without a download.
        return [.originalStorage(.disk)] + options + [.processor(processor)]
    }
}

extension OspreyWrapper {
    /// The image ``TargetSettings/placeholderMemoryKey`` names, else (with
    /// ``TargetSettings/showsCachedVariantFirst``) the largest other variant of `source` in memory.
    private func cachedVariant(
        _ keys: (source: String, computed: String), options: ResolvedOptions, settings: TargetSettings<Base>, pipeline: ImagePipeline
    ) -> Image? {
        let memory = (options.targetCache ?? pipeline.configuration.cache).memoryStorage
        if let key = settings.placeholderMemoryKey { return memory.value(forKey: key, extendingExpiration: ExpirationExtending.none) }
        guard settings.showsCachedVariantFirst, options.cachePolicy.readsCache else { return nil }
        return pipeline.variants.largestVariant(of: keys.source, except: keys.computed, in: memory)
    }
}

extension ImagePipeline {
    /// ``memoryCacheKey(for:options:)`` with resolved options.
    func memoryCacheKey(_ source: ImageSource, options: ResolvedOptions) -> String {
        ImageCache.computedKey(cacheKey(for: source), processorIdentifier: options.processor.identifier)
    }

    /// The processed image from memory, else, with ``DiskLookup/synchronous``,
    /// read from the disk cache on this thread (decoded here, then put in memory); with the cache
    /// it came from.
    func synchronousCachedImage(for source: ImageSource, options: ResolvedOptions) -> (image: Image, cacheType: CacheType)? {
        if let image = memoryImage(source, options: options) { return (image, .memory) }
        guard options.diskLookup == .synchronous, options.cachePolicy.readsDisk else { return nil }
        let cache = options.targetCache ?? configuration.cache
        let key = cacheKey(for: source)
        let identifier = options.processor.identifier
        // The storage's own read: its files carry a trailer after the bytes.
        guard
            let data = cache.diskStorage.valueNow(
                forKey: ImageCache.computedKey(key, processorIdentifier: identifier), extendingExpiration: nil,
                servingExpired: servesExpired(source)),
            let image = try? configuration.decoder.decode(data, options: options.decodingOptions)
        else { return nil }
        _ = try? cache.memoryStorage.store(
            image, forKey: ImageCache.computedKey(key, processorIdentifier: identifier), cost: image.cost,
            expiration: options.memoryCacheExpiration)
        return (options.imageModifier?(image) ?? image, .disk)
    }
}

/// Tells a target's caller once that its request is no longer current: when the request is
/// superseded (its download may go on into the cache), or when its result comes for a widget that
/// shows something else by then.
@MainActor
private final class Superseded {
    private var tellCaller: (() -> Void)?

    init(_ tellCaller: @escaping () -> Void) {
        self.tellCaller = tellCaller
    }

    /// Tells the caller, the first time only.
    func tell() {
        let caller = tellCaller
        tellCaller = nil
        caller?()
    }
}
