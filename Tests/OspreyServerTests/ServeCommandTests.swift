import Foundation
import OspreyTestSupport
import Testing

/// `osprey serve` as a process: flags, a signed URL answered, SIGTERM shuts it down cleanly.
@Suite("Server CLI: osprey serve", .serialized, .timeLimit(.minutes(3)))
struct ServeCommandTests {
    /// Starts `osprey serve` on a free port with the fixtures' thumbor key, loopback sources
    /// allowed and `arguments`, beside the fixture origin; returns it once it listens.
    static func launch(_ arguments: [String]) async throws -> (Process, ServerHarnessClient) {
        let executable = try #require(OspreyBinary.url)
        let fixtures = ClientFixtures.shared
        _ = try await LoopbackOrigin.fixtureOrigin(port: fixtures.origin_port)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--port", "0", "--allow-loopback-sources"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["OSPREY_THUMBOR_KEY"] = fixtures.thumbor_key
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line names the port: "osprey serve: listening on http://127.0.0.1:PORT".
        let line = try await process.nextLine(of: pipe, "osprey serve \(arguments.joined(separator: " ")) to print its port")
        guard let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw OriginError(message: "osprey serve printed no port: \(line)")
        }
        return (process, ServerHarnessClient(port: port))
    }

    @Test("--help documents the flags scripts rely on, with defaults")
    func help() async throws {
        let executable = try #require(OspreyBinary.url)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let status = try await process.exitStatus("osprey serve --help to exit")
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(status == 0)
        for flag in [
            "--host", "--port", "--thumbor-key", "--imgproxy-key", "--imgproxy-salt", "--allow-unsafe",
            "--allow-loopback-sources", "--cache-dir", "--workers", "--queue", "--imgproxy-prefix", "default 8080", "OSPREY_THUMBOR_KEY",
            "--max-animation-frames", "OSPREY_MAX_ANIMATION_FRAMES", "default 100", "--allow-private-sources",
            "OSPREY_ALLOW_PRIVATE_SOURCES", "--origin-ttl", "--local-root", "OSPREY_LOCAL_ROOT", "--upload", "--upload-dir",
            "--upload-put", "--upload-delete", "OSPREY_UPLOAD_DIR"
        ] {
            #expect(output.contains(flag), "\(flag)")
        }
    }

    @Test("serves a libthumbor-signed URL from a loopback origin, then exits 0 on SIGTERM")
    func serveAndTerminate() async throws {
        let fixtures = ClientFixtures.shared
        let (process, server) = try await Self.launch(["--workers", "2"])
        defer { if process.isRunning { process.terminate() } }
        let reply = try await server.get(fixtures.thumbor[0].path)
        #expect(reply.status == 200)
        #expect(reply.image?.width == fixtures.thumbor[0].width)
        #expect(try await server.get("/health").status == 200)
        process.interrupt()  // SIGINT; SIGTERM behaves the same
        let status = try await process.exitStatus("osprey serve to exit after the signal")
        #expect(status == 0)
    }
    @Test("SIGTERM with --drain-seconds: readiness turns 503 while requests are still served, then a clean exit; X-Osprey-Instance names it")
    func drainOnSigterm() async throws {
        let fixtures = ClientFixtures.shared
        let (process, server) = try await Self.launch(["--drain-seconds", "3", "--instance-name", "alpha"])
        defer { if process.isRunning { process.terminate() } }
        let ready = try await server.get("/health/ready")
        #expect(ready.status == 200 && ready.header("X-Osprey-Instance") == "alpha")
        // thumbor's health path answers as thumbor does.
        let thumborHealth = try await server.get("/healthcheck")
        #expect(thumborHealth.status == 200 && thumborHealth.text == "WORKING\n")
        process.terminate()  // SIGTERM
        var draining = false
        for _ in 0..<100 where !draining {
            draining = try await server.get("/health/ready").status == 503
            if !draining { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(draining, "readiness reports the drain")
        #expect(try await server.get("/healthcheck").status == 503)
        #expect(try await server.get("/health/live").status == 200, "still alive while draining")
        let reply = try await server.get(fixtures.thumbor[0].path)
        #expect(reply.status == 200 && reply.image?.width == fixtures.thumbor[0].width, "requests are still served while draining")
        let status = try await process.exitStatus("osprey serve to exit after the signal")
        #expect(status == 0)
    }
}
