import Foundation
import Osprey
import OspreyServer
import OspreyTestSupport
import Testing

/// `--local-root`: files served by both grammars, every way out of the root refused with 404.
@Suite("Local sources", .serialized, .timeLimit(.minutes(5)))
struct LocalSourceTests {
    /// A root with `photo.jpg`, `sub/inner.png` and `link.jpg` (a symbolic link to the secret
    /// outside the root), beside `secret.jpg` and `canary.txt` outside it.
    struct Layout {
        let directory: TemporaryDirectory
        var root: URL { directory.path("root") }
        static let canary = "CANARY-1c9e4b"

        init() throws {
            directory = try TemporaryDirectory()
            let root = directory.path("root")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try TestImages.photo.write(to: root.appendingPathComponent("photo.jpg"))
            try TestImages.transparentPNG.write(to: root.appendingPathComponent("sub/inner.png"))
            try TestImages.photo.write(to: directory.path("secret.jpg"))
            try Data((Self.canary + "\n").utf8).write(to: directory.path("canary.txt"))
            try FileManager.default.createSymbolicLink(
                atPath: root.appendingPathComponent("link.jpg").path, withDestinationPath: directory.path("secret.jpg").path)
            try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("up").path, withDestinationPath: directory.url.path)
        }
    }

    @Test("imgproxy local:/// (plain and base64) and thumbor bare paths are served; http(s) image parts still fetched")
    func served() async throws {
        let layout = try Layout()
        defer { layout.directory.remove() }
        let origin = try await LoopbackOrigin.start()
        origin.set("/remote.jpg", body: TestImages.photo)
        let server = try await ServerHarness.start { $0.localRoot = layout.root }
        defer {
            Task {
                await server.stop()
                await origin.stop()
            }
        }
        let plain = try await server.get("/imgproxy/_/rs:fit:100:100/plain/local:///photo.jpg@png")
        #expect(plain.status == 200 && plain.image?.width == 100 && plain.header("content-type") == "image/png", "\(plain.text)")
        let encoded = Data("local:///sub/inner.png".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let base64 = try await server.get("/imgproxy/_/rs:fit:50:50/\(encoded).png")
        #expect(base64.status == 200 && base64.image?.width == 50, "\(base64.text)")
        let thumbor = try await server.get("/unsafe/80x60/photo.jpg")
        #expect(thumbor.status == 200 && thumbor.image?.width == 80, "\(thumbor.text)")
        let nested = try await server.get("/unsafe/fit-in/40x40/sub/inner.png")
        #expect(nested.status == 200 && nested.image?.width == 40, "\(nested.text)")
        let fallback = try await server.get("/unsafe/60x45/\(origin.address("/remote.jpg"))")
        #expect(fallback.status == 200 && fallback.image?.width == 60, "\(fallback.text)")
        #expect(origin.hits("/remote.jpg") == 1)
        let missing = try await server.get("/unsafe/80x60/nothing.jpg")
        #expect(missing.status == 404)
    }

    @Test("every traversal form is refused with 404 and nothing outside the root appears in an answer")
    func traversal() async throws {
        let layout = try Layout()
        defer { layout.directory.remove() }
        let server = try await ServerHarness.start { $0.localRoot = layout.root }
        defer { Task { await server.stop() } }
        let outside = layout.directory.path("secret.jpg").path
        let base64 = { (text: String) in
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        var paths: [String] = []
        for image in ["secret.jpg", "canary.txt"] {
            paths += [
                "/imgproxy/_/plain/local:///../\(image)",
                "/imgproxy/_/plain/local:///sub/../../\(image)",
                "/imgproxy/_/plain/local:///%2e%2e/\(image)",
                "/imgproxy/_/plain/local:///%252e%252e/\(image)",
                "/imgproxy/_/plain/local:///%25252e%25252e/\(image)",
                "/imgproxy/_/plain/local:///..%2f\(image)",
                "/imgproxy/_/plain/local:///up/\(image)",
                "/imgproxy/_/\(base64("local:///../\(image)"))",
                "/imgproxy/_/\(base64("local:///%2e%2e/\(image)"))",
                "/imgproxy/info/_/plain/local:///../\(image)",
                "/unsafe/../\(image)",
                "/unsafe/100x100/../\(image)",
                "/unsafe/%2e%2e/\(image)",
                "/unsafe/%252e%252e/\(image)",
                "/unsafe/..%2f\(image)",
                "/unsafe/sub/%2e%2e/%2e%2e/\(image)",
                "/unsafe/up/\(image)",
                "/info/unsafe/../\(image)",
                "/unsafe/filters:format(png)/../\(image)"
            ]
        }
        paths += [
            "/imgproxy/_/plain/local:///\(outside)",
            "/imgproxy/_/plain/local:////\(outside)",
            "/imgproxy/_/\(base64("local:///" + outside))",
            "/unsafe//\(outside)",
            "/unsafe/\(outside.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
            "/imgproxy/_/plain/local:///photo.jpg%00.png",
            "/imgproxy/_/plain/local:///photo%2500.jpg",
            "/imgproxy/_/\(base64("local:///photo.jpg\u{0}"))",
            "/unsafe/photo.jpg%00",
            "/unsafe/photo.jpg%2500",
            "/imgproxy/_/plain/local:///link.jpg",
            "/unsafe/link.jpg",
            "/unsafe/80x60/link.jpg",
            "/imgproxy/_/plain/local:///sub",
            "/imgproxy/_/plain/local:///",
            "/unsafe/sub"
        ]
        for path in paths {
            let answer = try await server.client.raw(path)
            #expect(answer.status == 404, "\(path): \(answer.text.prefix(200))")
            #expect(!answer.text.contains(Layout.canary), "\(path) leaked the canary")
        }
        // The same forms once more, through a client that may normalise them.
        for path in paths where !path.contains("%00") {
            let reply = try? await server.get(path)
            if let reply {
                #expect(reply.status == 404 || reply.status == 400, "\(path): \(reply.status)")
                #expect(!reply.text.contains(Layout.canary))
            }
        }
    }

    @Test("a changed file gives a new ETag and new pixels; the old variant is never served again")
    func changedFile() async throws {
        let layout = try Layout()
        defer { layout.directory.remove() }
        let server = try await ServerHarness.start { $0.localRoot = layout.root }
        defer { Task { await server.stop() } }
        let path = "/imgproxy/_/rs:fit:40:30/plain/local:///photo.jpg@png"
        let first = try await server.get(path)
        let again = try await server.get(path)
        #expect(first.status == 200 && again.header("etag") == first.header("etag"))
        let red = try Image(
            rgba: [UInt8](repeating: 0, count: 400 * 300 * 4).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 }, width: 400,
            height: 300)
        try red.encoded(as: .jpeg, quality: 90).write(to: layout.root.appendingPathComponent("photo.jpg"))
        let changed = try await server.get(path)
        #expect(changed.status == 200)
        #expect(changed.header("etag") != first.header("etag"))
        let before = try #require(first.image).rgbaPixels(), after = try #require(changed.image).rgbaPixels()
        #expect(before != after)
        #expect(after[0] > 200 && after[1] < 40, "the new file's red")
        let info = try await server.get("/imgproxy/info/_/plain/local:///photo.jpg")
        let json = try #require(try JSONSerialization.jsonObject(with: info.body) as? [String: Any])
        #expect((json["etag"] as? String)?.hasPrefix("\"") == true)
        try FileManager.default.removeItem(at: layout.root.appendingPathComponent("photo.jpg"))
        #expect(try await server.get(path).status == 404, "a deleted file is not answered from the result cache")
    }
}
