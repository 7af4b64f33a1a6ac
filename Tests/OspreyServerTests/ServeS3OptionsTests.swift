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
            let keys = ["AWS_ACCESS_KEY_ID": moto.credentials.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.credentials.secretAccessKey]
            try await Self.withServe(moto, ["--allowed-source", "s3://photos/"], environment: keys) { client in
                let reply = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://photos/a.jpg")
                #expect(reply.status == 200 && reply.image?.width == 50, "\(reply.status) \(reply.text.prefix(200))")
                let other = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://secret/a.jpg")
                #expect(other.status == 403)
            }
        }
    }

    @Test("No credentials anywhere: a public bucket is read anonymously, a private one is refused saying so")
    func anonymous() async throws {
        try await MotoServer.with(buckets: ["open:public", "closed"], signatures: false) { moto in
            try await moto.put(TestImages.photo, bucket: "open", key: "a.jpg")
            try await moto.put(TestImages.photo, bucket: "closed", key: "a.jpg")
            try await Self.withServe(moto, [], environment: [:]) { client in
                let reply = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://open/a.jpg")
                #expect(reply.status == 200 && reply.image?.width == 50, "\(reply.status) \(reply.text.prefix(200))")
                let closed = try await client.get("/imgproxy/_/rs:fit:50:50/plain/s3://closed/a.jpg")
                #expect(closed.status == 502 && closed.text.contains("the request was anonymous"), "\(closed.status) \(closed.text)")
            }
        }
    }

    /// Runs `osprey serve` on moto's endpoint (path-style) with `arguments`, the AWS variables of
    /// this process removed and `environment` added (the shared files pointed at nothing, so no
    /// file outside the test is read), calls `body` with a client of it, then stops it.
    static func withServe(
        _ moto: MotoServer, _ arguments: [String], environment: [String: String], _ body: (ServerHarnessClient) async throws -> Void
    ) async throws {
        let process = Process()
        process.executableURL = try #require(OspreyBinary.url)
        process.arguments = ["serve", "--port", "0", "--s3-endpoint", moto.endpoint.absoluteString, "--s3-path-style"] + arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AWS_") }
        merged["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent"
        merged["AWS_CONFIG_FILE"] = "/nonexistent"
        process.environment = merged.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate() }
        let line = try await process.nextLine(of: pipe, "osprey serve to print its port")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        try await body(ServerHarnessClient(port: port))
        process.terminate()
        _ = try await process.exitStatus(within: .seconds(30), "osprey serve to exit on SIGTERM")
    }
}
