import Foundation
import Osprey
import OspreyServer
import OspreyTestSupport
import Testing

/// thumbor's upload API (`--upload`): round trips, methods allowed and refused, validation
/// before storing, and crash safety with the CLI killed mid-upload.
@Suite("Uploads", .serialized, .timeLimit(.minutes(5)))
struct UploadTests {
    static var location: Regex<(Substring, Substring, Substring)> { #/^/image/([0-9a-f]{32})/(.+)$/# }

    /// The names in `directory` (hidden temporary files included).
    static func listing(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).sorted()
    }

    @Test("POST → 201 + Location → GET identical bytes → thumbor and imgproxy variants; multipart field media; 405s")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try await ServerHarness.start {
            $0.upload = true
            $0.uploadDirectory = directory.url
        }
        defer { Task { await server.stop() } }
        let photo = try TestImages.shared("hopper.jpg")
        let posted = try await server.client.send("POST", "/image", headers: [("Slug", "hopper.jpg"), ("Content-Type", "image/jpeg")], body: photo)
        #expect(posted.status == 201, "\(posted.text)")
        let location = try #require(posted.header("location"))
        let match = try #require(location.wholeMatch(of: Self.location), "\(location)")
        let id = String(match.1)
        #expect(match.2 == "hopper.jpg")
        #expect(Self.listing(directory) == [id])

        let original = try await server.get(location)
        #expect(original.status == 200 && original.body == photo && original.header("content-type") == "image/jpeg")
        let bare = try await server.get("/image/\(id)")
        #expect(bare.body == photo)
        let head = try await server.client.send("HEAD", "/image/\(id)")
        #expect(head.status == 200 && head.body.isEmpty)
        let thumbnail = try await server.get("/unsafe/64x64/\(id)")
        #expect(thumbnail.status == 200 && thumbnail.image?.width == 64, "\(thumbnail.text)")
        let withName = try await server.get("/unsafe/fit-in/32x32/\(id)/hopper.jpg")
        #expect(withName.status == 200, "\(withName.text)")
        let imgproxy = try await server.get("/imgproxy/_/rs:fit:50:50/plain/upload:///\(id)@png")
        #expect(imgproxy.status == 200 && imgproxy.image?.width == 50, "\(imgproxy.text)")

        let png = try TestImages.shared("logo.png")
        let form = MultipartBody.make(field: "media", filename: "logo.png", data: png)
        let multipart = try await server.client.send("POST", "/image", headers: [("Content-Type", form.contentType)], body: form.body)
        #expect(multipart.status == 201, "\(multipart.text)")
        let second = try #require(multipart.header("location")?.wholeMatch(of: Self.location))
        #expect(second.2 == "logo.png")
        #expect(try await server.get("/image/\(second.1)").body == png)
        let unnamed = try await server.client.send("POST", "/image", body: photo)
        #expect(unnamed.header("location")?.hasSuffix("/image.jpg") == true, "\(unnamed.header("location") ?? "")")

        #expect(try await server.client.send("PUT", "/image/\(id)", body: png).status == 405)
        #expect(try await server.client.send("DELETE", "/image/\(id)").status == 405)
        #expect(try await server.get("/image").status == 405)
        #expect(try await server.client.send("PATCH", "/image/\(id)", body: png).status == 405)
        #expect(try await server.get("/image/\(String(repeating: "0", count: 32))").status == 404)
        #expect(try await server.get("/image/../etc").status == 404)
        #expect(try await server.get("/image/\(id)").body == photo, "refused PUT and DELETE left it alone")
    }

    @Test("PUT replaces (new variants), DELETE removes (variants gone) when allowed; another instance on the same directory serves it")
    func replaceAndDelete() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try await ServerHarness.start {
            $0.upload = true
            $0.uploadDirectory = directory.url
            $0.uploadPut = true
            $0.uploadDelete = true
        }
        defer { Task { await server.stop() } }
        let posted = try await server.client.send("POST", "/image", headers: [("Slug", "a.jpg")], body: TestImages.photo)
        let id = try #require(posted.header("location")?.wholeMatch(of: Self.location)).1
        let variant = "/unsafe/40x0/\(id)"
        let before = try await server.get(variant)
        #expect(before.status == 200 && before.image?.height == 30)

        let other = try await ServerHarness.start {
            $0.upload = true
            $0.uploadDirectory = directory.url
        }
        #expect(try await other.get("/image/\(id)").body == TestImages.photo, "the other instance serves the upload")
        await other.stop()

        let replaced = try await server.client.send("PUT", "/image/\(id)", body: TestImages.transparentPNG)
        #expect(replaced.status == 204, "\(replaced.text)")
        #expect(try await server.get("/image/\(id)").body == TestImages.transparentPNG)
        let after = try await server.get(variant)
        #expect(after.status == 200 && after.image?.height == 20, "the 200x100 replacement, not the cached variant")
        #expect(after.header("etag") != before.header("etag"))
        #expect(try await server.client.send("PUT", "/image/\(id)", body: Data("hello".utf8)).status == 415)
        #expect(try await server.get("/image/\(id)").body == TestImages.transparentPNG, "a refused PUT leaves the upload")

        #expect(try await server.client.send("DELETE", "/image/\(id)").status == 204)
        #expect(try await server.get("/image/\(id)").status == 404)
        #expect(try await server.get(variant).status == 404, "no variant of a deleted upload")
        #expect(try await server.client.send("DELETE", "/image/\(id)").status == 404)
        #expect(Self.listing(directory).isEmpty)
    }

    @Test("a bomb, a text file, an empty body, an oversized body, an SVG and a PDF are refused with nothing stored")
    func refused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try await ServerHarness.start {
            $0.upload = true
            $0.uploadDirectory = directory.url
            $0.maxSourceBytes = 200_000
        }
        defer { Task { await server.stop() } }
        let bomb = try ImageBombs.jpeg(width: 60000, height: 60000)
        let cases: [(String, Data, Int)] = [
            ("bomb", bomb, 412), ("text", Data("just some text, not an image\n".utf8), 415), ("empty", Data(), 415),
            ("truncated", TestImages.photo.prefix(TestImages.photo.count / 3), 415),
            ("oversized", Data(count: 300_000), 412),
            // Served back as they are, an SVG or a PDF could run scripts from the server's origin.
            ("svg", try FixtureImages.formatData("drawing.svg"), 415), ("pdf", try FixtureImages.formatData("drawing.pdf"), 415)
        ]
        for (name, body, status) in cases {
            let reply = try await server.client.send("POST", "/image", headers: [("Slug", "\(name).jpg")], body: body)
            #expect(reply.status == status, "\(name): \(reply.status) \(reply.text)")
            #expect(reply.header("location") == nil)
            #expect(!reply.text.isEmpty && !reply.text.dropLast().contains("\n"), "one-line reason")
            let form = MultipartBody.make(field: "media", filename: "\(name).jpg", data: body)
            let multipart = try await server.client.send("POST", "/image", headers: [("Content-Type", form.contentType)], body: form.body)
            #expect(multipart.status == status, "\(name) multipart: \(multipart.status) \(multipart.text)")
        }
        #expect(Self.listing(directory).isEmpty, "\(Self.listing(directory))")
    }

    @Test("osprey serve killed (SIGKILL) during uploads leaves no torn or half-listed upload; a new instance serves every listed one")
    func killedMidUpload() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let photo = try TestImages.shared("hubble_deep_field.jpg")
        let arguments = ["--upload", "--upload-dir", directory.url.path, "--allow-unsafe"]
        let (process, client) = try await ServeCommandTests.launch(arguments)
        defer { if process.isRunning { process.terminate() } }
        let uploads = Task {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<16 {
                    group.addTask { (try? await client.send("POST", "/image", body: photo, timeout: .seconds(20)).status) ?? 0 }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        // Killed while uploads are being received, validated and written.
        try await eventually("a first upload in the directory") { !ServerLoad.listed(directory).isEmpty }
        kill(process.processIdentifier, SIGKILL)
        let statuses = try await uploads.value("the 16 uploads' answers")
        let listed = ServerLoad.listed(directory)
        // Uploads answered 201 are listed; others may be listed too (written, killed before answering).
        #expect(!listed.isEmpty && listed.count >= statuses.filter { $0 == 201 }.count, "every 201 is listed")
        for id in listed {
            let bytes = try Data(contentsOf: directory.path(id))
            #expect(bytes == photo, "upload \(id) is whole")
        }
        let (restarted, again) = try await ServeCommandTests.launch(arguments)
        defer { restarted.terminate() }
        for id in listed {
            #expect(try await again.get("/image/\(id)").body == photo)
        }
        #expect(try await again.get("/unsafe/32x32/\(listed[0])").status == 200)
    }
}

/// What a killed server left in an upload directory.
enum ServerLoad {
    /// The listed uploads (file names that are ids), hidden temporary files left out.
    static func listed(_ directory: TemporaryDirectory) -> [String] {
        UploadTests.listing(directory).filter { $0.count == 32 && !$0.hasPrefix(".") }
    }
}
