import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("Uploads in a bucket (--upload-dir s3://…), shared by instances (moto)", .serialized, .timeLimit(.minutes(10)))
struct BucketUploadTests {
    @Test("POST on one instance; GET, variants and upload:/// on another; PUT and DELETE seen by both; refused uploads store nothing")
    func shared() async throws {
        try await MotoServer.with(buckets: ["uploads"]) { moto in
            func start() async throws -> ServerHarness {
                try await ServerHarness.start {
                    $0.s3 = moto.configuration()
                    $0.upload = true
                    $0.uploadPut = true
                    $0.uploadDelete = true
                    $0.uploadBucket = S3Path("s3://uploads/originals")
                    $0.allowedSources = ["example.com"]
                }
            }
            let first = try await start()
            let second = try await start()
            let posted = try await first.client.send("POST", "/image", headers: [("Slug", "photo.jpg")], body: TestImages.photo)
            #expect(posted.status == 201, "\(posted.text)")
            let location = try #require(posted.header("location"))
            let id = String(location.split(separator: "/")[1])
            #expect(UploadStore.isID(id))
            // The object is in the bucket under the prefix.
            let stored = try await moto.withClient { try await $0.head(S3Location(bucket: "uploads", key: "originals/\(id)")) }
            #expect(stored?.length == TestImages.photo.count)

            for server in [first, second] {
                let original = try await server.get(location)
                #expect(original.status == 200 && original.body == TestImages.photo && original.header("Content-Type") == "image/jpeg")
                let thumbor = try await server.get("/unsafe/fit-in/60x60/\(id)")
                #expect(thumbor.status == 200 && thumbor.image?.width == 60, "\(thumbor.status) \(thumbor.text.prefix(200))")
                let imgproxy = try await server.get("/imgproxy/_/rs:fit:40:40/plain/upload:///\(id)")
                #expect(imgproxy.status == 200 && imgproxy.image?.width == 40, "\(imgproxy.status) \(imgproxy.text.prefix(200))")
            }

            let replacement = TestImages.make(width: 300, height: 300, alpha: false, format: .jpeg)
            #expect(try await first.client.send("PUT", "/image/\(id)", body: replacement).status == 204)
            #expect(try await second.get("/image/\(id)").body == replacement)
            // A new variant asks the bucket (ETag): the replacement's pixels, on the other instance too.
            #expect(try await second.get("/unsafe/fit-in/50x50/\(id)").image?.height == 50)
            #expect(try await second.client.send("DELETE", "/image/\(id)").status == 204)
            #expect(try await first.get("/image/\(id)").status == 404)
            #expect(try await first.get("/unsafe/fit-in/70x70/\(id)").status == 404, "a new variant of a deleted upload")
            #expect(try await first.client.send("DELETE", "/image/\(id)").status == 404)

            // Refused before anything is stored.
            let text = try await first.client.send("POST", "/image", headers: [("Slug", "a.txt")], body: Data("not an image".utf8))
            #expect(text.status == 415)
            await first.stop()
            await second.stop()
        }
    }
}
