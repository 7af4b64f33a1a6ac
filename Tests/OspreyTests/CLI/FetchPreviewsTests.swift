import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("CLI fetch --previews", .timeLimit(.minutes(5)))
struct FetchPreviewsTests {
    func json(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("a progressive JPEG on a slow link: preview lines (preview, size, bytes so far) before the final line; a baseline JPEG: none")
    func previews() async throws {
        let server = try await LoopbackOrigin.start()
        defer { Task { await server.stop() } }
        let progressive = try ProgressiveTestData.progressive()
        server.setBody("prog", progressive)
        server.setBody("base", try ProgressiveTestData.baseline())
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-previews-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cache) }
        // 4 KiB every 40 ms: each scan arrives well apart from the next.
        let url = server.url("/slow/prog/a?chunk=4096&pause=40").absoluteString
        let run = try await CLIRunner.run(["fetch", url, "--previews", "--preview-interval", "0", "--json", "--cache-dir", cache.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.stdout.split(separator: "\n").map(json)
        let final = try #require(lines.last)
        #expect(final["preview"] == nil && final["cacheType"] as? String == "none")
        let previews = lines.dropLast()
        #expect(previews.count >= 1, "\(run.stdout)")
        var received: [Int] = []
        for preview in previews {
            #expect(preview["preview"] as? Bool == true)
            #expect(preview["width"] as? Int == final["width"] as? Int && preview["height"] as? Int == final["height"] as? Int)
            #expect(preview["expectedBytes"] as? Int == progressive.count)
            received.append(preview["receivedBytes"] as? Int ?? 0)
        }
        #expect(received == received.sorted() && Set(received).count == received.count)
        #expect(received.allSatisfy { $0 > 0 && $0 < progressive.count })

        let baseline = server.url("/slow/base/a?chunk=4096&pause=5").absoluteString
        let plain = try await CLIRunner.run(["fetch", baseline, "--previews", "--preview-interval", "0", "--json", "--cache-dir", cache.path])
        #expect(plain.status == 0, "\(plain.stderr)")
        let plainLines = plain.stdout.split(separator: "\n")
        #expect(plainLines.count == 1)
        #expect(try json(plainLines[0])["preview"] == nil)
    }
}
