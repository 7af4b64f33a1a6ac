import Foundation
import Testing

@testable import Osprey

@Suite("CLI info placeholder hashes", .timeLimit(.minutes(5)))
struct InfoHashTests {
    @Test("info --json prints the library's ThumbHash and BlurHash (4x3 by default)")
    func json() async throws {
        let url = TestData.url("chelsea.png")
        let result = try await CLIRunner.run(["info", "--json", url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let data = try TestData.data("chelsea.png")
        #expect(object["thumbhash"] as? String == (try ThumbHash(imageData: data)).string)
        #expect(object["blurhash"] as? String == (try BlurHash(imageData: data)).string)
        let fine = try await CLIRunner.run(["info", "--json", "--blurhash-components", "9x9", url.path])
        let fineObject = try #require(try JSONSerialization.jsonObject(with: Data(fine.stdout.utf8)) as? [String: Any])
        #expect(fineObject["blurhash"] as? String == (try BlurHash(imageData: data, componentsX: 9, componentsY: 9)).string)
    }

    @Test("plain info has one line per hash; bad components are a usage error")
    func lines() async throws {
        let result = try await CLIRunner.run(["info", TestData.url("iss634.gif").path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        let thumb = try #require(lines.first { $0.hasPrefix("thumbhash: ") })
        #expect(try ThumbHash(string: String(thumb.dropFirst("thumbhash: ".count))).decodedSize.width == 32, "a square image")
        let blur = try #require(lines.first { $0.hasPrefix("blurhash: ") })
        #expect(try BlurHash(string: String(blur.dropFirst("blurhash: ".count))).componentsX == 4)
        for bad in ["10x3", "4", "axb", "0x1"] {
            let refused = try await CLIRunner.run(["info", "--blurhash-components", bad, TestData.url("hopper.jpg").path])
            #expect(refused.status == 64, "\(bad): \(refused.stderr)")
        }
    }
}
