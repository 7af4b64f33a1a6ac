import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

/// The reference decoders the format tests compare with: `djxl`/`cjxl` (libjxl-tools),
/// `rsvg-convert` (librsvg2-bin), `pdftoppm` (poppler-utils). `scripts/test.sh` installs them with
/// apt when they are missing.
enum ReferenceTools {
    struct Missing: Error, CustomStringConvertible {
        var tool: String
        var package: String
        var description: String { "\(tool) is not installed: apt-get install \(package) (scripts/test.sh does)" }
    }

    /// The executable `name` on `PATH` (or in /usr/bin), from apt's `package`.
    static func tool(_ name: String, package: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Missing(tool: name, package: package)
    }

    /// Runs `name` (from `package`) with `arguments`; fails with its stderr when it exits non-zero.
    static func run(_ name: String, package: String, _ arguments: [String]) async throws {
        let result = try await ProcessRun.run(try tool(name, package: package), arguments, within: .seconds(60))
        guard result.status == 0 else {
            throw Missing(tool: "\(name) \(arguments.joined(separator: " ")) failed: \(result.errors)", package: package)
        }
    }

    /// A fresh temporary directory; the caller removes it.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The largest difference of one byte between two equally sized RGBA buffers.
    static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }
}
