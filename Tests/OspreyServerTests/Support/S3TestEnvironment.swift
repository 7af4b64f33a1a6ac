import Foundation
import OspreyTestSupport

/// The Python tools of the S3 tests: the virtualenv `scripts/s3-venv.sh` makes once (moto's
/// server, botocore), and moto's S3-compatible server started on a loopback port.
enum S3TestEnvironment {
    /// The repository's root (this file is Tests/OspreyServerTests/Support/S3TestEnvironment.swift).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's directory, made by `scripts/s3-venv.sh` (pip install on the first run, so a long deadline).
    static func venv() async throws -> URL {
        try await made.value
    }

    private static let made = Task<URL, any Error> {
        let run = try await ProcessRun.run(
            URL(fileURLWithPath: "/bin/bash"), [repository.appendingPathComponent("scripts/s3-venv.sh").path], within: .seconds(900))
        guard run.status == 0 else { throw OriginError(message: "scripts/s3-venv.sh failed: \(run.errors)") }
        return URL(fileURLWithPath: run.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
