/// One main-actor widget's request state (Nuke's per-view `ImageViewController`): the widget's
/// latest request, its indicator, and what to keep running when it is replaced. Each widget
/// stores its own controller, so nothing is shared between widgets and no lock is taken to set an
/// image; releasing the widget releases the controller, which cancels its load.
@MainActor
public final class ImageTargetController {
    /// The running request, apart from the isolated state so that `deinit` can cancel it.
    private let task = Locked<ImageTask?>(nil)
    /// Issued per `setImage`; a result is shown only while its number is still this one.
    package private(set) var generation: UInt64 = 0
    /// The source of the latest request (`nil` after a cancel or a `nil` source).
    package private(set) var source: ImageSource?
    /// What the latest request has shown so far: a hash placeholder decoded off the main actor is
    /// shown only before any preview or result, and a preview only before the result.
    var shown: Shown = .nothing
    private var indicator: (any ImageIndicator)?
    /// Whether a cancelled request's download goes on into the cache (``TargetSettings/finishesDownloadOnCancel``).
    private var finishesDownload = false
    /// Tells the running request's caller that it is no longer current, when it goes on.
    private var superseded: (() -> Void)?
    /// The pixel size the latest request was decoded for (``TargetSettings/sizedToTarget``) and
    /// how to load it again at the widget's new size (same source, options and pipeline, keeping
    /// the image shown meanwhile): OspreyGTK's picture calls it when its allocation grows past it.
    package var sizedRequest: (width: Int, height: Int, reload: @MainActor () -> Void)?

    /// An idle controller.
    public nonisolated init() {}

    /// Whether a request is running (memory hits never run).
    package var isLoading: Bool { task.withLock { $0 != nil } }

    /// Starts a new request: ends the previous one (see `cancel(finishingDownload:)`) and
    /// returns the new request's number.
    func begin(_ source: ImageSource?) -> UInt64 {
        cancel()
        self.source = source
        shown = .nothing
        return generation
    }

    /// Records the running request of generation `number` and its indicator.
    func attach(
        _ running: ImageTask, number: UInt64, indicator: (any ImageIndicator)?, finishesDownload: Bool,
        superseded: @escaping () -> Void
    ) {
        guard number == generation else { return running.cancel() }
        task.withLock { $0 = running }
        self.indicator = indicator
        self.finishesDownload = finishesDownload
        self.superseded = superseded
    }

    /// Whether generation `number` is still the latest request; when it is and `finish` is set,
    /// the request ends (its indicator stops).
    func isCurrent(_ number: UInt64, finish: Bool) -> Bool {
        guard number == generation else { return false }
        if finish { end() }
        return true
    }

    /// Cancels the latest request: its result is never shown, its indicator stops, and its
    /// completion gets ``OspreyError/PipelineReason/notCurrentSourceTask(source:)``. A download it
    /// started goes on into the cache at the lowest priority when `finishingDownload` is `nil` (the
    /// request's ``TargetSettings/finishesDownloadOnCancel``, default `true`) or `true`.
    package func cancel(finishingDownload: Bool? = nil) {
        generation &+= 1
        source = nil
        sizedRequest = nil
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        if let running, !running.isCompleted {
            // The request itself goes on at the lowest priority (its result is no longer current,
            // so it is not shown): a second request joining its download would come too late
            // (after a disk lookup) and download again.
            if finishingDownload ?? finishesDownload {
                running.priority = .veryLow
                superseded?()
            } else {
                running.cancel()
            }
        }
        end()
    }

    /// What a request has put on the widget, in the order it may come.
    enum Shown: Int, Comparable {
        case nothing, placeholder, preview, result
        static func < (a: Shown, b: Shown) -> Bool { a.rawValue < b.rawValue }
    }

    /// Whether generation `number` may show `stage` now (it is current and nothing later was
    /// shown); when it may, records that it did.
    func mayShow(_ stage: Shown, for number: UInt64) -> Bool {
        guard number == generation, shown < stage || (stage == .preview && shown == .preview) else { return false }
        shown = stage
        return true
    }

    private func end() {
        task.withLock { $0 = nil }
        indicator?.stopAnimating()
        indicator = nil
        finishesDownload = false
        superseded = nil
    }

    deinit {
        task.withLock { $0 }?.cancel()
    }
}
