import Foundation
import OspreyTestSupport
import Testing

@testable import OspreyServer

/// `osprey serve`'s object-storage options as a process: credentials from the AWS variables,
/// bad values refused with the reason.
@Suite("Server CLI: osprey serve with object storage", .serialized, .timeLimit(.minutes(5)))
struct ServeS3OptionsTests {
    @Test("Bad --result-store, --upload-dir s3:// and --s3-endpoint values exit non-zero with the reason")
    func refused() async throws {
        let executable = try #require(OspreyBinary.url)
        for (arguments, reason) in [
            (["--result-store", "http://x/y"], "is not s3://BUCKET[/PREFIX]"), (["--upload-dir", "s3://a..b/x"], "is not s3://BUCKET[/PREFIX]"),
            (["--s3-endpoint", "ftp://x"], "is not an http or https URL")
        ] {
            let run = try await ProcessRun.run(executable, ["serve", "--port", "0"] + arguments, within: .seconds(60))
            #expect(run.status != 0 && run.errors.contains(reason), "\(arguments): \(run.status) \(run.errors)")
        }
    }

    @Test("s3:// sources signed with the key pair in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY")
    func credentialsFromTheEnvironment() async throws {
        try await MotoServer.with(buckets: ["photos"]) { moto in
            try await moto.put(TestImages.photo, bucket: "photos", key: "a.jpg")
            let executable = try #require(OspreyBinary.url)
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "serve", "--port", "0", "--s3-endpoint", moto.endpoint.absoluteString, "--s3-path-style", "--allowed-source", "s3://photos/"
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["AWS_ACCESS_KEY_ID"] = moto.credentials.accessKeyID
            environment["AWS_SECRET_ACCESS_KEY"] = moto.credentials.secretAccessKey
            environment["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent"
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { process.terminate() }
            let line = try await process.nextLine(of: pipe, "osprey serve to print its port")
            let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
            let client = ServerHarnessClient(port: port)
            let reply = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://photos/a.jpg")
            #expect(reply.status == 200 && reply.image?.width == 50, "\(reply.status) \(reply.text.prefix(200))")
            let other = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://secret/a.jpg")
            #expect(other.status == 403)
            process.terminate()
            _ = try await process.exitStatus(within: .seconds(30), "osprey serve to exit on SIGTERM")
        }
    }
}
