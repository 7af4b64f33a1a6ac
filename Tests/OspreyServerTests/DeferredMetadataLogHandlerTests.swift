import Logging
import Synchronization
import Testing

@testable import OspreyServer

/// A handler recording what reaches it.
struct RecordingHandler: LogHandler {
    let events: SharedEvents
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        events.append(metadata.merging(event.metadata ?? [:]) { $1 })
    }
}

final class SharedEvents: Sendable {
    private let list = Mutex<[Logger.Metadata]>([])
    func append(_ metadata: Logger.Metadata) { list.withLock { $0.append(metadata) } }
    var all: [Logger.Metadata] { list.withLock { $0 } }
}

@Suite("Deferred metadata: a logger's metadata reaches its handler when something is logged", .timeLimit(.minutes(1)))
struct DeferredMetadataLogHandlerTests {
    @Test("metadata set on the logger is logged with each event, the event's own winning")
    func merged() {
        let events = SharedEvents()
        var base = RecordingHandler(events: events)
        base.metadata = ["server": "a", "shared": "base"]
        var logger = Logger(label: "test") { _ in DeferredMetadataLogHandler(wrapping: base) }
        logger[metadataKey: "hb.request.id"] = "42"
        logger[metadataKey: "shared"] = "logger"
        #expect(logger[metadataKey: "server"] == "a")
        #expect(logger[metadataKey: "hb.request.id"] == "42")
        logger.info("one", metadata: ["shared": "event"])
        logger.info("two")
        logger[metadataKey: "server"] = nil
        logger.info("three")
        #expect(
            events.all == [
                ["server": "a", "shared": "event", "hb.request.id": "42"],
                ["server": "a", "shared": "logger", "hb.request.id": "42"],
                ["shared": "logger", "hb.request.id": "42"]
            ])
    }

    @Test("the level is the wrapped handler's; below it nothing is logged")
    func level() {
        let events = SharedEvents()
        var logger = Logger(label: "test") { _ in DeferredMetadataLogHandler(wrapping: RecordingHandler(events: events)) }
        #expect(logger.logLevel == .info)
        logger.debug("hidden")
        logger.logLevel = .debug
        logger.debug("shown")
        #expect(events.all.count == 1)
        logger.handler.metadata = ["only": "this"]
        logger.info("replaced")
        #expect(events.all.last == ["only": "this"])
    }
}
