import Logging

/// Wraps a log handler, keeping the metadata set on a logger to itself until something is
/// logged, then handing it over with the event.
///
/// Hummingbird gives every request a logger of its own with a request id; a handler that
/// formats its metadata as soon as it is set (swift-log's `StreamLogHandler`) would do that on
/// every request, though most requests log nothing. What is logged, and how it reads, is the
/// wrapped handler's, unchanged.
struct DeferredMetadataLogHandler: LogHandler {
    private var base: any LogHandler
    /// Metadata set through this handler, not yet given to `base`.
    private var added: Logger.Metadata = [:]

    init(wrapping base: any LogHandler) {
        self.base = base
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata.merging(added) { $1 } }
        set {
            base.metadata = newValue
            added = [:]
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { added[key] ?? base[metadataKey: key] }
        set {
            added[key] = newValue
            if newValue == nil, base[metadataKey: key] != nil { base[metadataKey: key] = nil }
        }
    }

    func log(event: LogEvent) {
        guard !added.isEmpty else { return base.log(event: event) }
        var event = event
        // The event's own metadata wins over the logger's, as in any handler.
        event.metadata = added.merging(event.metadata ?? [:]) { $1 }
        base.log(event: event)
    }
}
