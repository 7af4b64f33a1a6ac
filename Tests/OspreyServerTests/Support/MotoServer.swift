import Foundation
import OspreyTestSupport

@testable import OspreyServer

#if canImport(Glibc)
    import Glibc
#endif

/// moto's S3-compatible server (`moto_server`) on a free loopback port, with signature checks on:
/// started with `INITIAL_NO_AUTH_ACTION_COUNT=3`, prepared by `Tests/S3/moto_setup.py` (an IAM
/// user allowed `s3:*`, its key, the buckets), so every later request must be signed with that key.
///
/// `@unchecked Sendable`: the `Process` is set once at start and only terminated by ``stop()``;
/// the other fields are constants.
final class MotoServer: @unchecked Sendable {
    let process: Process
    let port: Int
    let credentials: S3Configuration.Credentials

    /// The endpoint, `http://127.0.0.1:PORT`.
    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(process: Process, port: Int, credentials: S3Configuration.Credentials) {
        self.process = process
        self.port = port
        self.credentials = credentials
    }

    /// Starts moto on a free loopback port and makes `buckets` (`NAME:public`: readable by anyone,
    /// through a bucket policy). `signatures: false` starts it without signature checks (moto
    /// then still applies bucket policies and object ACLs to unsigned requests: the public-bucket
    /// tests); its ``credentials`` are then a placeholder.
    static func start(buckets: [String], signatures: Bool = true) async throws -> MotoServer {
        let venv = try await S3TestEnvironment.venv()
        let port = try freePort()
        let process = Process()
        process.executableURL = venv.appendingPathComponent("bin/moto_server")
        process.arguments = ["-H", "127.0.0.1", "-p", "\(port)"]
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = signatures ? "3" : nil
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        do {
            try await eventually("moto_server to accept connections on port \(port)") { canConnect(port) }
            let run = try await ProcessRun.run(
                venv.appendingPathComponent("bin/python"),
                [S3TestEnvironment.repository.appendingPathComponent("Tests/S3/moto_setup.py").path] + (signatures ? [] : ["--no-auth"])
                    + ["http://127.0.0.1:\(port)"] + buckets)
            guard run.status == 0 else { throw OriginError(message: "moto_setup.py failed: \(run.errors)") }
            let keys = try JSONDecoder().decode([String: String].self, from: run.stdout)
            return MotoServer(
                process: process, port: port,
                credentials: .init(accessKeyID: keys["accessKeyID"] ?? "", secretAccessKey: keys["secretAccessKey"] ?? ""))
        } catch {
            process.terminate()
            throw error
        }
    }

    /// Runs `body` with a moto server holding `buckets`, stopped afterwards, also when `body` throws.
    static func with<T: Sendable>(buckets: [String], signatures: Bool = true, _ body: (MotoServer) async throws -> T) async throws -> T {
        let moto = try await start(buckets: buckets, signatures: signatures)
        do {
            let result = try await body(moto)
            await moto.stop()
            return result
        } catch {
            await moto.stop()
            throw error
        }
    }

    /// Runs `body` with a client of ``configuration(pathStyle:buckets:secret:)``, shut down
    /// afterwards, also when `body` throws (async-http-client traps on a client dropped running).
    func withClient<T: Sendable>(
        pathStyle: Bool = true, buckets: [String] = [], secret: String? = nil, _ body: (S3Client) async throws -> T
    ) async throws -> T {
        let client = S3Client(configuration: configuration(pathStyle: pathStyle, buckets: buckets, secret: secret))
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// Puts `data` at `bucket`/`key`.
    func put(_ data: Data, bucket: String, key: String) async throws {
        try await withClient { try await $0.put(S3Location(bucket: bucket, key: key), data: data, contentType: "image/jpeg") }
    }

    /// An S3 configuration for this server: path-style at `127.0.0.1`, or virtual-host at
    /// `s3.test` (every `*.s3.test` name used connected to loopback).
    func configuration(pathStyle: Bool = true, buckets: [String] = [], secret: String? = nil) -> S3Configuration {
        var s3 = S3Configuration()
        s3.pathStyle = pathStyle
        if pathStyle {
            s3.endpoint = endpoint
        } else {
            s3.endpoint = URL(string: "http://s3.test:\(port)")!
            s3.hostOverrides = Dictionary(uniqueKeysWithValues: (["s3.test"] + buckets.map { "\($0).s3.test" }).map { ($0, "127.0.0.1") })
        }
        var credentials = credentials
        if let secret { credentials.secretAccessKey = secret }
        s3.credentials = credentials
        return s3
    }

    /// Stops the server (SIGKILL: nothing of it needs to survive) and waits for it.
    func stop() async {
        kill(process.processIdentifier, SIGKILL)
        _ = try? await process.exitStatus(within: .seconds(30), "moto_server to exit")
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port nothing listens on now (bound to 0 then released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw OriginError(message: "cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
