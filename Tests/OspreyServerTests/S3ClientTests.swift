import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

@Suite("S3 client against moto (signatures checked): addressing, conditional GET, limits, errors", .serialized, .timeLimit(.minutes(15)))
struct S3ClientTests {
    @Test("PUT, GET, HEAD, DELETE with path-style and virtual-host addressing; If-None-Match gives 304")
    func roundTrip() async throws {
        try await MotoServer.with(buckets: ["alpha", "beta"]) { moto in
            for (pathStyle, bucket) in [(true, "alpha"), (false, "beta")] {
                try await moto.withClient(pathStyle: pathStyle, buckets: [bucket]) { client in
                    let location = try S3Location(bucket: bucket, key: "dir/a b~c_d.jpg")
                    try await client.put(location, data: TestImages.photo, contentType: "image/jpeg")
                    guard case .object(let object) = try await client.get(location, maxBytes: 1 << 20) else {
                        Issue.record("no object (pathStyle \(pathStyle))")
                        return
                    }
                    #expect(object.data == TestImages.photo)
                    #expect(object.etag != nil)
                    let head = try await client.head(location)
                    #expect(head?.etag == object.etag && head?.length == TestImages.photo.count)
                    let again = try await client.get(location, ifNoneMatch: object.etag, maxBytes: 1 << 20)
                    guard case .notModified = again else {
                        Issue.record("If-None-Match with the current ETag is not a 304 (pathStyle \(pathStyle))")
                        return
                    }
                    try await client.delete(location)
                    guard case .notFound = try await client.get(location, maxBytes: 1 << 20) else {
                        Issue.record("a deleted key is still found (pathStyle \(pathStyle))")
                        return
                    }
                    #expect(try await client.head(location) == nil)
                }
            }
        }
    }

    @Test("A body over the limit is refused; a wrong secret is SignatureDoesNotMatch; a stopped store is unreachable")
    func failures() async throws {
        let moto = try await MotoServer.start(buckets: ["alpha"])
        let location = try S3Location(bucket: "alpha", key: "big.jpg")
        try await moto.withClient { client in
            try await client.put(location, data: TestImages.photo)
            do {
                _ = try await client.get(location, maxBytes: 100)
                Issue.record("a body over the limit was read")
            } catch {
                #expect("\(error)".contains("larger than 100 bytes"))
            }
        }
        try await moto.withClient(secret: "not-the-secret") { wrong in
            do {
                _ = try await wrong.get(location, maxBytes: 1 << 20)
                Issue.record("a wrong secret was accepted")
            } catch {
                #expect("\(error)".contains("403 SignatureDoesNotMatch"), "\(error)")
            }
        }
        var unknown = moto.configuration()
        unknown.credentials?.accessKeyID = "AKIDUNKNOWN"
        let stranger = S3Client(configuration: unknown)
        do {
            _ = try await stranger.get(location, maxBytes: 1 << 20)
            Issue.record("an unknown access key was accepted")
        } catch {
            #expect("\(error)".contains("403 InvalidAccessKeyId"), "\(error)")
        }
        await stranger.shutdown()
        await moto.stop()
        try await moto.withClient { client in
            do {
                _ = try await client.head(location)
                Issue.record("a stopped store answered")
            } catch {
                #expect("\(error)".contains("object store unreachable"), "\(error)")
            }
        }
    }

    @Test("Locations: s3:// parsing, keys never leave their bucket, internal URLs round-trip")
    func locations() throws {
        let location = try S3Location.parse("s3://bucket/a/b%20c.jpg")
        #expect(location.bucket == "bucket" && location.key == "a/b c.jpg")
        #expect(S3Location(internal: location.url) == location)
        let bad = [
            "s3://a/../b/x", "s3://a/x/./y", "s3://a/%2E%2E/b/x", "s3://a/", "s3://a", "s3://../x", "s3://a%00/x", "s3://a/x%00y",
            "s3://a..b/x", "s3://.a/x", "s3://a./x", "s3://a%2Fb/x"
        ]
        for bad in bad {
            #expect(throws: ServerError.self, "\(bad)") { _ = try S3Location.parse(bad) }
        }
        // A literal, twice-encoded dot segment stays a key inside the bucket.
        let literal = try S3Location.parse("s3://a/%252E%252E/b")
        #expect(literal.bucket == "a" && literal.key == "%2E%2E/b")
        #expect(S3Location(internal: literal.url) == literal)
        // The reserved host is never an http(s) source.
        #expect(throws: ServerError.self) { _ = try SourceURL.parse("https://s3.osprey.invalid/a/b.jpg") }
        #expect(S3Path("s3://store/results")?.prefix == "results/")
        #expect(S3Path("s3://store")?.prefix == "")
        #expect(S3Path("http://store/x") == nil)
        #expect(S3Path("s3://store/../x") == nil)
    }

    @Test("Credentials from the environment, else the shared credentials file's profile")
    func credentials() throws {
        let file = """
            [default]
            aws_access_key_id = AKIDDEFAULT
            aws_secret_access_key = secretdefault
            # a comment
            [other]
            aws_access_key_id=AKIDOTHER
            aws_secret_access_key=secretother
            aws_session_token=tok
            """
        #expect(S3Configuration.credentials(file: file, profile: "default")?.accessKeyID == "AKIDDEFAULT")
        #expect(S3Configuration.credentials(file: file, profile: "other")?.sessionToken == "tok")
        #expect(S3Configuration.credentials(file: file, profile: "none") == nil)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("credentials")
        try Data(file.utf8).write(to: path)
        let env = ["AWS_SHARED_CREDENTIALS_FILE": path.path, "AWS_PROFILE": "other"]
        #expect(S3Configuration.credentials(environment: env)?.accessKeyID == "AKIDOTHER")
        let keys = env.merging(["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 }
        #expect(S3Configuration.credentials(environment: keys)?.accessKeyID == "AKIDENV")
        #expect(S3Configuration.credentials(environment: ["HOME": directory.path]) == nil)
    }

    @Test("Region from AWS_REGION, AWS_DEFAULT_REGION, else AWS_PROFILE's region in the shared config file")
    func region() throws {
        let file = """
            [default]
            region = eu-west-1
            [profile other]
            ; a comment
            region=ap-south-1
            [profile  spaced ]
            region = us-west-2
            [other]
            region = wrong
            """
        #expect(S3Configuration.region(file: file, profile: "default") == "eu-west-1")
        #expect(S3Configuration.region(file: file, profile: "other") == "ap-south-1")
        #expect(S3Configuration.region(file: file, profile: "spaced") == "us-west-2")
        #expect(S3Configuration.region(file: file, profile: "none") == nil)
        #expect(S3Configuration.region(file: "[profile default]\nregion = ca-central-1", profile: "default") == "ca-central-1")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("config")
        try Data(file.utf8).write(to: path)
        try Data("[default]\nregion = sa-east-1\n".utf8).write(to: directory.appendingPathComponent(".aws/config"))
        let env = ["AWS_CONFIG_FILE": path.path, "AWS_PROFILE": "other", "HOME": directory.path]
        #expect(S3Configuration.region(environment: env) == "ap-south-1")
        #expect(S3Configuration.region(environment: ["AWS_CONFIG_FILE": path.path]) == "eu-west-1")
        #expect(S3Configuration.region(environment: ["HOME": directory.path]) == "sa-east-1", "~/.aws/config by default")
        #expect(S3Configuration.region(environment: env.merging(["AWS_DEFAULT_REGION": "eu-north-1"]) { $1 }) == "eu-north-1")
        #expect(S3Configuration.region(environment: env.merging(["AWS_REGION": "eu-south-1", "AWS_DEFAULT_REGION": "x"]) { $1 }) == "eu-south-1")
        #expect(S3Configuration.region(environment: ["AWS_CONFIG_FILE": directory.appendingPathComponent("none").path]) == nil)
    }
}
