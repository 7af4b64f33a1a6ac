import Osprey

extension OspreyApplication {
    /// Wires GIO's memory, network and power-profile monitors to `pipeline` (see `ImagePipeline`'s
    /// `handleMemoryPressure(_:)`, `handleNetworkChange(available:metered:)` and
    /// `handlePowerSaver(_:)`); ``initialize(processingThreadNice:)`` does it for
    /// `ImagePipeline.shared`. Calling it again for a pipeline does nothing; the pipeline is held weakly.
    public static func monitorSystem(for pipeline: ImagePipeline) { SystemMonitors.watch(pipeline) }
}
