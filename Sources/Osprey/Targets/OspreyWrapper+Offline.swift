import Foundation

extension OspreyWrapper {
    /// After the widget's request `number` for `source` failed offline, loads it again when the
    /// network comes back (``ImagePipeline/handleNetworkChange(available:metered:)``), if the
    /// widget still wants it then (no other `setImage` or cancel came since): the widget shows its
    /// image without the app doing anything. What it shows meanwhile (the failure image) stays
    /// until the image replaces it; the caller's completion was told of the failure and is not
    /// called again.
    func reloadWhenOnline(
        _ source: ImageSource, number: UInt64, options: [RequestOption], settings: TargetSettings<Base>, pipeline: ImagePipeline
    ) {
        var again = settings
        again.keepCurrentImageWhileLoading = true
        let retry = again
        let target = base
        pipeline.whenNetworkAvailable { [weak target] in
            let widget = target
            Task { @MainActor in
                guard let target = widget, target.ospreyController.generation == number else { return }
                OspreyWrapper(target).load(
                    source, placeholder: nil, options: options, settings: retry, pipeline: pipeline, progress: nil, completion: nil)
            }
        }
    }
}
