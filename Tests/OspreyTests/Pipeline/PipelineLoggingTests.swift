import Foundation
import Logging
import Testing

@testable import Osprey

/// The pipeline's logger: silent by default, a miss's stages when the caller asks for them.
@Suite("Pipeline logging", .timeLimit(.minutes(2)))
struct PipelineLoggingTests {
    @Test("the default logger discards everything, debug and trace included")
    func defaultIsSilent() {
        let logger = ImagePipeline.Configuration().logger
        #expect(logger.logLevel == .critical, "a no-op handler reports no level below critical")
        #expect(logger.label == "osprey")
    }

    @Test("a miss logs its stages in order: memory miss, disk lookup, download, decode, process, store")
    func missStages() async throws {
        try await PipelineFixture.run { f in
            let messages = Collector<String>()
            var logger = Logger(label: "osprey-test", factory: { _ in CollectingHandler(messages) })
            logger.logLevel = .trace
            let pipeline = ImagePipeline(configuration: .init(cache: f.cache, downloader: f.pipeline.configuration.downloader, logger: logger))
            _ = try await pipeline.image(
                for: f.source("/image/logged"),
                options: [.processor(ImageProcessors.Grayscale())])
            let stages = ["memory miss", "disk lookup", "disk miss", "download start", "download end", "decode", "process", "store"]
            let logged = messages.values.filter { stages.contains($0) }
            #expect(logged == stages)
        }
    }
}
