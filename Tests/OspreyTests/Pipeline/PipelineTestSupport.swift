import Foundation
import Logging
import OspreyTestSupport
import Synchronization
import Testing

@testable import Osprey

/// A pipeline over a fresh temporary cache and a loopback server, torn down afterwards.
struct PipelineFixture {
    let server: LoopbackOrigin
    let loader: DataLoader
    let cache: ImageCache
    let pipeline: ImagePipeline
    let directory: URL
    /// The pipeline's log messages (debug and above).
    let messages: Collector<String>

    /// How many times the pipeline decoded bytes, from its `decode` log events.
    var decodes: Int { messages.values.filter { $0 == "decode" }.count }

    /// Runs `body` with a fresh fixture; `now` is the disk storage's clock (default the real one).
    static func run(now: @escaping @Sendable () -> Date = { Date() }, _ body: (PipelineFixture) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-pipeline-\(UUID().uuidString)")
        try await withLoopback { server, loader in
            let cache = ImageCache(name: "test", diskConfig: DiskStorage.Config(name: "test", directory: directory, now: now))
            let messages = Collector<String>()
            var logger = Logger(label: "osprey.test") { _ in CollectingHandler(messages) }
            logger.logLevel = .debug
            let pipeline = ImagePipeline(configuration: .init(cache: cache, downloader: makeDownloader(loader), logger: logger))
            try await body(
                PipelineFixture(server: server, loader: loader, cache: cache, pipeline: pipeline, directory: directory, messages: messages))
            await cache.diskStorage.waitForPendingWork()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    func source(_ path: String) -> ImageSource { .url(server.url(path)) }

    /// `source` resolved with `options` as an entry point would, carrying `memoryMiss` (a miss
    /// the test made itself) instead of a lookup of its own.
    func resolved(_ source: ImageSource, _ options: ResolvedOptions, memoryMiss: MemoryMiss?) -> ResolvedRequest {
        let key = pipeline.cacheKey(for: source)
        let identifier = options.processor.identifier
        return ResolvedRequest(
            source: source, options: options, cache: options.targetCache ?? pipeline.configuration.cache, key: key,
            processorIdentifier: identifier, computedKey: ImageCache.computedKey(key, processorIdentifier: identifier),
            memoryMiss: memoryMiss, pipeline: pipeline)
    }
}

/// A processor that counts how often it runs, to prove shared stages run once.
final class CountingProcessor: ImageProcessing {
    let identifier: String
    private let counter = Atomic<Int>(0)
    var count: Int { counter.load(ordering: .relaxed) }

    /// Held until this returns true (or 10 s pass): makes "the stage is still running when the
    /// next request joins it" deterministic.
    private let holdUntil: (@Sendable () -> Bool)?

    init(_ identifier: String, holdUntil: (@Sendable () -> Bool)? = nil) {
        self.identifier = identifier
        self.holdUntil = holdUntil
    }

    func process(_ image: Image) throws(OspreyError) -> Image {
        counter.add(1, ordering: .relaxed)
        if let holdUntil {
            let deadline = Date().addingTimeInterval(10)
            while !holdUntil() && Date() < deadline { usleep(1_000) }
        }
        return image
    }
}

/// Hands every message to a collector.
struct CollectingHandler: LogHandler {
    let messages: Collector<String>
    init(_ messages: Collector<String>) { self.messages = messages }
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        messages.append(event.message.description)
    }
}
