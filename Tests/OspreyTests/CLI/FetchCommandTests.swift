import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("CLI fetch and prefetch", .timeLimit(.minutes(5)))
final class FetchCommandTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    func json(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("fetch: one JSON line per URL, duplicates coalesced, cache types, original kept only with --keep-original, exit codes")
    func fetch() async throws {
        let server = try await LoopbackOrigin.start()
        defer { Task { await server.stop() } }
        let cache = directory.appendingPathComponent("cache").path
        let url = server.url("/image/cli").absoluteString
        let first = try await CLIRunner.run(["fetch", url, url, "--cache-dir", cache, "--json", "--process", "resize:64x64:fill"])
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let object = try json(line)
            #expect(object["url"] as? String == url)
            #expect(object["cacheType"] as? String == "none")
            #expect(object["width"] as? Int == 64 && object["height"] as? Int == 64)
            #expect(object["format"] as? String == "jpeg")
            #expect((object["bytes"] as? Int ?? 0) > 0)
            #expect(object["milliseconds"] is Double || object["milliseconds"] is Int)
            #expect(object.keys.contains("error") && object["error"] is NSNull)
        }
        #expect(server.hits("/image/cli") == 1, "duplicate URLs share one download")

        let again = try await CLIRunner.run(["fetch", url, "--cache-dir", cache, "--json", "--process", "resize:64x64:fill"])
        #expect(try json(again.stdout.split(separator: "\n")[0])["cacheType"] as? String == "disk")
        let other = try await CLIRunner.run(["fetch", url, "--cache-dir", cache, "--json", "--process", "grayscale"])
        #expect(try json(other.stdout.split(separator: "\n")[0])["cacheType"] as? String == "none")
        #expect(server.hits("/image/cli") == 2, "the cache held the result only: another processor downloads")
        let kept = try await CLIRunner.run(["fetch", url, "--cache-dir", cache, "--json", "--process", "thumbnail:48", "--keep-original"])
        #expect(try json(kept.stdout.split(separator: "\n")[0])["cacheType"] as? String == "none")
        let reused = try await CLIRunner.run(["fetch", url, "--cache-dir", cache, "--json", "--process", "thumbnail:24"])
        let reusedLine = try json(reused.stdout.split(separator: "\n")[0])
        #expect(reusedLine["cacheType"] as? String == "disk" && reusedLine["width"] as? Int == 24)
        #expect(server.hits("/image/cli") == 3, "a kept original serves another processor without a download")

        let out = directory.appendingPathComponent("out").path
        let written = try await CLIRunner.run(["fetch", url, "--cache-dir", cache, "--out", out, "--process", "thumbnail:32,format:png"])
        #expect(written.status == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(files == ["cli.png"])
        #expect(try Image(contentsOf: URL(fileURLWithPath: out).appendingPathComponent("cli.png")).width == 32)

        let failing = try await CLIRunner.run(["fetch", url, server.url("/status/404").absoluteString, "--cache-dir", cache, "--json"])
        #expect(failing.status == 1)
        let failed = try json(failing.stdout.split(separator: "\n")[1])
        #expect((failed["error"] as? String)?.contains("404") == true)

        let cacheOnly = try await CLIRunner.run(["fetch", server.url("/image/never").absoluteString, "--cache-dir", cache, "--only-from-cache"])
        #expect(cacheOnly.status == 1)
        #expect(server.hits("/image/never") == 0)
        let usage = try await CLIRunner.run(["fetch", url, "--process", "nonsense"])
        #expect(usage.status == 64)
    }

    @Test("fetch --out writes the same file from the network and from the disk cache; JSON shows the planned decode")
    func sameFileFromEveryLevel() async throws {
        let cache = directory.appendingPathComponent("cache").path
        let rocket = TestData.url("rocket.jpg").path
        var outputs: [[UInt8]] = [], files: [Data] = []
        for (run, expected) in ["none", "disk"].enumerated() {
            let out = directory.appendingPathComponent("o\(run)").path
            let result = try await CLIRunner.run([
                "fetch", rocket, "--cache-dir", cache, "--json", "--out", out,
                "--process", "resize:200x200:fill,round:40,format:png"
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let line = try json(result.stdout.split(separator: "\n")[0])
            #expect(line["cacheType"] as? String == expected)
            if expected == "none" {
                #expect(line["decodedWidth"] as? Int == 200 && line["decodedHeight"] as? Int == 200)
                #expect(line["shrunkOnLoad"] as? Bool == true)
            } else {
                #expect(line["decodedWidth"] == nil, "a processed disk hit decodes no original")
            }
            let file = URL(fileURLWithPath: out).appendingPathComponent("rocket.png")
            let image = try Image(contentsOf: file)
            #expect(image.width == 200 && image.height == 200 && image.hasAlpha)
            #expect(try Pixels.pixel(image, x: 0, y: 0)[3] == 0, "run \(run): transparent corner")
            outputs.append(try image.rgbaPixels())
            files.append(try Data(contentsOf: file))
        }
        #expect(outputs[0] == outputs[1], "the disk hit wrote other pixels than the fresh load")
        #expect(files[0] == files[1], "with format: in the spec, --out copies the cached entry")
    }

    @Test(
        "a format: step keys the cached result: JPEG (flattened) and PNG of one chain are two entries; GIF and PNG origins give the same file twice")
    func formatStepKeysTheCache() async throws {
        let cache = directory.appendingPathComponent("cache").path
        func fetch(_ name: String, _ spec: String, into out: String) async throws -> (line: [String: Any], file: Data) {
            let result = try await CLIRunner.run([
                "fetch", TestData.url(name).path, "--cache-dir", cache, "--json", "--out", directory.appendingPathComponent(out).path,
                "--process", spec
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let line = try json(result.stdout.split(separator: "\n")[0])
            let file = try Data(contentsOf: URL(fileURLWithPath: try #require(line["output"] as? String)))
            return (line, file)
        }
        for name in ["logo.png", "iss634.gif"] {
            let fresh = try await fetch(name, "thumbnail:64,format:jpeg:70", into: "fresh-\(name)")
            let hit = try await fetch(name, "thumbnail:64,format:jpeg:70", into: "hit-\(name)")
            #expect(fresh.line["cacheType"] as? String == "none" || fresh.line["cacheType"] as? String == "disk")
            #expect(hit.line["cacheType"] as? String == "disk")
            #expect(hit.file == fresh.file, "\(name): the disk hit wrote another file")
            #expect(ImageFormat(sniffing: hit.file) == .jpeg)
        }
        // One chain that makes alpha, JPEG then PNG: the PNG is a new entry made from the cached
        // original, with transparent corners, not the flattened JPEG entry.
        let jpeg = try await fetch("rocket.jpg", "resize:64x64:fill,round:16,format:jpeg", into: "jpeg")
        #expect(try Pixels.pixel(try Image(data: jpeg.file), x: 0, y: 0)[0] == 255, "flattened onto white")
        let png = try await fetch("rocket.jpg", "resize:64x64:fill,round:16,format:png", into: "png")
        #expect(png.line["decodedWidth"] as? Int == 64, "decoded from the original, not from the JPEG entry")
        let image = try Image(data: png.file)
        #expect(image.format == .png && image.hasAlpha)
        #expect(try Pixels.pixel(image, x: 0, y: 0)[3] == 0, "transparent corner")
    }

    @Test("prefetch: plain lines when not a terminal, then a summary; JSON summary")
    func prefetch() async throws {
        let server = try await LoopbackOrigin.start()
        defer { Task { await server.stop() } }
        let cache = directory.appendingPathComponent("cache").path
        let list = directory.appendingPathComponent("urls.txt")
        let urls = (0..<4).map { server.url("/image/pre/\($0)").absoluteString } + [server.url("/status/500").absoluteString]
        try (urls.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        let run = try await CLIRunner.run(["prefetch", "--input", list.path, "--cache-dir", cache, "--concurrency", "2"])
        #expect(run.status == 1, "one source failed")
        #expect(run.stdout.contains("completed: 4, skipped: 0, failed: 1 of 5"))
        #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("completed http") }.count == 4)
        let second = try await CLIRunner.run(["prefetch"] + Array(urls.prefix(4)) + ["--cache-dir", cache, "--json"])
        #expect(second.status == 0)
        let summary = try json(second.stdout.split(separator: "\n")[0])
        #expect(summary["skipped"] as? Int == 4)
        #expect(summary["completed"] as? Int == 0)
    }

    @Test("prefetch --process caches one result per source; --keep-original adds the originals")
    func prefetchCachesWhatWasAskedFor() async throws {
        let server = try await LoopbackOrigin.start()
        defer { Task { await server.stop() } }
        for (name, extra, expected) in [("results", [String](), 3), ("kept", ["--keep-original"], 6)] {
            let cache = directory.appendingPathComponent(name).path
            let urls = (0..<3).map { server.url("/image/\(name)/\($0)").absoluteString }
            let run = try await CLIRunner.run(["prefetch"] + urls + ["--cache-dir", cache, "--process", "thumbnail:16", "--json"] + extra)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try entryFiles(in: URL(fileURLWithPath: cache)).count == expected, "\(name): entries in the cache directory")
            let again = try await CLIRunner.run(["prefetch"] + urls + ["--cache-dir", cache, "--process", "thumbnail:16", "--json"])
            #expect(try json(again.stdout.split(separator: "\n")[0])["skipped"] as? Int == 3, "\(name): the results were hits")
        }
        #expect((0..<3).allSatisfy { server.hits("/image/results/\($0)") == 1 && server.hits("/image/kept/\($0)") == 1 })
    }
}
