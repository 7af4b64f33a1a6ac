import Foundation
import OspreyTestSupport

/// Runs the loopback origin (``LoopbackOrigin``, the one the tests and the counted benchmarks use)
/// serving the files of `directories` until the process that started it exits: `OspreyBench origin
/// DIR...` (the harness's scenarios 5 and 6, `gallery_scroll.sh`). Prints `listening PORT` once bound;
/// $ORIGIN_PORT, $ORIGIN_LOG, $ORIGIN_RATE as `LoopbackOrigin.runAsProcess(directories:)` says.
/// `GET /__hits` answers how many images it served.
func runOrigin(directories: [String]) async throws -> Never {
    try await LoopbackOrigin.runAsProcess(directories: directories)
}

/// An origin process started by the harness (the same executable, `origin` mode).
final class OriginProcess {
    let process = Process()
    let port: Int

    init(directories: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.isExecutableFile(atPath: process.executableURL!.path) {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        process.arguments = ["origin"] + directories
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(whereSeparator: \.isWhitespace).dropFirst().first, let port = Int(portText) else {
            throw BenchError("origin did not start: \(text)")
        }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
