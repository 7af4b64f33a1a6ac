import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("s3:// sources and the thumbor S3 loader against moto", .serialized, .timeLimit(.minutes(15)))
struct S3SourceTests {
    static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("imgproxy plain and base64 s3:// sources and thumbor keys in --thumbor-s3-bucket, path-style and virtual-host")
    func addressing() async throws {
        let moto = try await MotoServer.start(buckets: ["photos"])
        try await moto.put(TestImages.photo, bucket: "photos", key: "dir/a b.jpg")
        for pathStyle in [true, false] {
            let server = try await ServerHarness.start {
                $0.s3 = moto.configuration(pathStyle: pathStyle, buckets: ["photos"])
                $0.thumborS3Bucket = "photos"
                $0.allowedSources = ["s3://photos/"]
            }
            let plain = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://photos/dir/a%20b.jpg")
            #expect(plain.status == 200 && plain.image?.width == 60 && plain.image?.height == 45, "\(plain.status) \(plain.text.prefix(200))")
            let encoded = try await server.get("/imgproxy/_/rs:fit:40:40/\(Self.base64("s3://photos/dir/a b.jpg")).png")
            #expect(encoded.status == 200 && encoded.image?.width == 40 && encoded.header("Content-Type") == "image/png")
            let thumbor = try await server.get("/unsafe/fit-in/30x30/dir/a%20b.jpg")
            #expect(thumbor.status == 200 && thumbor.image?.width == 30, "\(thumbor.status) \(thumbor.text.prefix(200))")
            // One GET brought the object for all three.
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains("osprey_origin_fetches_total 1\n"))
            await server.stop()
        }
        await moto.stop()
    }

    @Test("Missing key 404; other buckets and escaping keys refused; a wrong secret is a 502 naming SignatureDoesNotMatch; over the limit 413")
    func refusals() async throws {
        let moto = try await MotoServer.start(buckets: ["photos", "secret"])
        try await moto.put(TestImages.photo, bucket: "photos", key: "a.jpg")
        try await moto.put(TestImages.photo, bucket: "secret", key: "x.jpg")
        let server = try await ServerHarness.start {
            $0.s3 = moto.configuration()
            $0.allowedSources = ["s3://photos/"]
            $0.maxSourceBytes = 2000
        }
        let missing = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://photos/none.jpg")
        #expect(missing.status == 404, "\(missing.text)")
        let other = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://secret/x.jpg")
        #expect(other.status == 403, "\(other.text)")
        for escaping in ["s3://photos/../secret/x.jpg", "s3://photos/%2E%2E/secret/x.jpg"] {
            let reply = try await server.get("/imgproxy/_/rs:fit:60:60/plain/\(escaping)")
            #expect(reply.status == 400 && reply.text.contains("never leave their bucket"), "\(escaping): \(reply.status) \(reply.text)")
        }
        let reserved = try await server.get("/imgproxy/_/rs:fit:60:60/plain/https://s3.osprey.invalid/secret/x.jpg")
        #expect(reserved.status == 400)
        #expect(TestImages.photo.count > 2000)
        let large = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://photos/a.jpg")
        #expect(large.status == 413, "\(large.status) \(large.text)")
        await server.stop()

        let wrong = try await ServerHarness.start { $0.s3 = moto.configuration(secret: "wrong") }
        let refused = try await wrong.get("/imgproxy/_/rs:fit:60:60/plain/s3://photos/a.jpg")
        #expect(refused.status == 502 && refused.text.contains("SignatureDoesNotMatch"), "\(refused.status) \(refused.text)")
        await wrong.stop()
        let off = try await ServerHarness.start()
        #expect(try await off.get("/imgproxy/_/rs:fit:60:60/plain/s3://photos/a.jpg").status == 403)
        await off.stop()
        await moto.stop()
    }

    @Test("A stale object is revalidated by ETag: unchanged is a 304 (nothing downloaded), changed gives the new pixels")
    func revalidation() async throws {
        let moto = try await MotoServer.start(buckets: ["photos"])
        try await moto.put(TestImages.photo, bucket: "photos", key: "a.jpg")
        let server = try await ServerHarness.start {
            $0.s3 = moto.configuration()
            $0.originTTL = 1
        }
        let path = "/imgproxy/_/rs:fit:60:60/plain/s3://photos/a.jpg"
        let first = try await server.get(path)
        #expect(first.image?.height == 45)
        try await Task.sleep(for: .milliseconds(1300))
        let second = try await server.get(path)
        #expect(second.body == first.body)
        let metrics = try await server.get("/metrics").text
        #expect(metrics.contains("osprey_origin_not_modified_total 1\n"), "the stale object was confirmed with a 304")
        try await moto.put(TestImages.make(width: 300, height: 300, alpha: false, format: .jpeg), bucket: "photos", key: "a.jpg")
        try await Task.sleep(for: .milliseconds(1300))
        let third = try await server.get(path)
        #expect(third.image?.height == 60, "the changed object is picked up")
        #expect(third.header("ETag") != first.header("ETag"))
        await server.stop()
        await moto.stop()
    }

    @Test("No credentials: a public bucket is read unsigned; a private object is a 502 saying the request was anonymous")
    func publicBucket() async throws {
        try await MotoServer.with(buckets: ["open:public", "closed"], signatures: false) { moto in
            try await moto.put(TestImages.photo, bucket: "open", key: "a.jpg")
            try await moto.put(TestImages.photo, bucket: "closed", key: "a.jpg")
            var s3 = moto.configuration()
            s3.credentials = nil
            let unsigned = S3Client(configuration: s3)
            let request = unsigned.request("GET", try S3Location(bucket: "open", key: "a.jpg"))
            #expect(request.headers["Authorization"].isEmpty && request.headers["X-Amz-Date"].isEmpty)
            await unsigned.shutdown()
            let server = try await ServerHarness.start { $0.s3 = s3 }
            let open = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://open/a.jpg")
            #expect(open.status == 200 && open.image?.width == 60, "\(open.status) \(open.text.prefix(200))")
            let missing = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://open/none.jpg")
            #expect(missing.status == 404, "\(missing.status) \(missing.text.prefix(200))")
            let closed = try await server.get("/imgproxy/_/rs:fit:60:60/plain/s3://closed/a.jpg")
            #expect(
                closed.status == 502 && closed.text.contains("403") && closed.text.contains("the request was anonymous"),
                "\(closed.status) \(closed.text.prefix(300))")
            await server.stop()
        }
    }
}
