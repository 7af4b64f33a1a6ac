import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Pipeline data stage: originals fetched, cached and revalidated", .timeLimit(.minutes(2)))
struct DataStageTests {
    @Test("fetch: downloaded once with its validators, then read from the original cache")
    func fetchThenCache() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/conditional/fetch")
            let first = try await f.pipeline.data(for: source)
            #expect(first.provenance == .origin && first.isFromOrigin)
            #expect(first.data == f.server.image && first.validator?.etag == "\"v1\"")
            let second = try await f.pipeline.data(for: source)
            #expect(second.provenance == .cache && second.data == first.data && second.validator?.etag == "\"v1\"")
            #expect(f.server.hits("/conditional/fetch") == 1)
        }
    }

    @Test("revalidate: fresh bytes are used without asking; stale ones get a conditional request, and a 304 keeps them")
    func revalidateNotModified() async throws {
        try await PipelineFixture.run { f in
            let path = "/conditional/stale"
            _ = try await f.pipeline.data(for: f.source(path))
            let fresh = try await f.pipeline.data(for: f.source(path), options: [.cachePolicy(.revalidate)], maxAge: .seconds(3600))
            #expect(fresh.provenance == .cache && f.server.hits(path) == 1)
            let stale = try await f.pipeline.data(for: f.source(path), options: [.cachePolicy(.revalidate)])
            #expect(stale.provenance == .revalidated && stale.age == .zero && stale.data == f.server.image)
            #expect(f.server.hits(path) == 2 && f.server.snapshot.headers[path]?["if-none-match"] == "\"v1\"")
        }
    }

    @Test("revalidate: a 200 replaces the cached bytes")
    func revalidateModified() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/changed")
            let key = f.pipeline.cacheKey(for: source)
            let old = try TestImages.data("logo.png")
            try await f.cache.storeToDisk(old, forKey: key)
            #expect(try await f.pipeline.data(for: source).data == old)
            let new = try await f.pipeline.data(for: source, options: [.cachePolicy(.revalidate)])
            #expect(new.provenance == .origin && new.data == f.server.image)
            #expect(try await f.pipeline.data(for: source, options: [.cachePolicy(.cacheOnly)]).data == f.server.image)
        }
    }

    @Test("the origin's max-age shortens the freshness time, unless told not to")
    func originMaxAge() async throws {
        try await PipelineFixture.run { f in
            let path = "/maxage/0/x"
            let loaded = try await f.pipeline.data(for: f.source(path))
            #expect(loaded.originMaxAge == 0)
            let revalidated = try await f.pipeline.data(for: f.source(path), options: [.cachePolicy(.revalidate)], maxAge: .seconds(3600))
            #expect(revalidated.provenance == .revalidated && f.server.hits(path) == 2)
            let kept = try await f.pipeline.data(
                for: f.source(path), options: [.cachePolicy(.revalidate)], maxAge: .seconds(3600), honoringOriginMaxAge: false)
            #expect(kept.provenance == .cache && kept.originMaxAge == 0 && f.server.hits(path) == 2)
        }
    }

    @Test("stale-if-error: an origin error or a body that is not an image leaves the cached bytes in use")
    func staleIfError() async throws {
        try await PipelineFixture.run { f in
            let cached = try TestImages.data("logo.png")
            for path in ["/status/500", "/html"] {
                let source = f.source(path)
                try await f.cache.storeToDisk(cached, forKey: f.pipeline.cacheKey(for: source))
                let result = try await f.pipeline.data(for: source, options: [.cachePolicy(.revalidate)])
                guard case .staleAfterError(let error) = result.provenance else {
                    Issue.record("\(path): \(result.provenance)")
                    continue
                }
                #expect(result.data == cached, "\(path): \(error)")
                #expect(f.server.hits(path) == 1)
            }
            // With nothing cached, the origin's error is the caller's.
            await #expect(throws: OspreyError.self) { try await f.pipeline.data(for: f.source("/status/404")) }
        }
    }

    @Test("reload downloads whatever is cached; cache-only fails on a miss with imageNotExisting")
    func reloadAndCacheOnly() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/image/reload")
            _ = try await f.pipeline.data(for: source)
            let reloaded = try await f.pipeline.data(for: source, options: [.cachePolicy(.reload)])
            #expect(reloaded.provenance == .origin && f.server.hits("/image/reload") == 2)
            #expect(try await f.pipeline.data(for: source, options: [.cachePolicy(.cacheOnly)]).provenance == .cache)
            let missing = f.source("/image/never")
            let key = f.pipeline.cacheKey(for: missing)
            await #expect(throws: OspreyError.pipeline(.imageNotExisting(key: key))) {
                try await f.pipeline.data(for: missing, options: [.cachePolicy(.cacheOnly)])
            }
            #expect(f.server.hits("/image/never") == 0)
        }
    }

    @Test("callers asking at the same time share one download; storage none keeps nothing")
    func sharedAndNotStored() async throws {
        try await PipelineFixture.run { f in
            let source = f.source("/gated/data")
            let pipeline = f.pipeline
            let callers = (0..<3).map { _ in Task { try await pipeline.data(for: source, options: [.storage(.none)]) } }
            #expect(await f.server.waitUntil { $0.hits["/gated/data", default: 0] == 1 })
            // Every caller has joined the job before the bytes come.
            try await eventually("3 requests on the data job") { pipeline.dataJobs.waitingCount() >= 3 }
            f.server.openGate("data")
            for caller in callers { #expect(try await caller.value.data == f.server.image) }
            #expect(f.server.hits("/gated/data") == 1)
            #expect(!f.cache.diskStorage.isCached(forKey: f.pipeline.cacheKey(for: source)))
        }
    }
}
