import ArgumentParser
import Foundation
import Osprey

/// Turns an error into the CLI's contract: one `error: <reason>` line on stderr and a sysexits code.
enum CommandFailure {
    /// Reports `error` and returns the exit code to throw.
    static func report(_ error: any Error) -> ExitCode {
        let message: String
        let code: Int32
        switch error {
        case let error as OspreyError:
            message = error.description
            switch error {
            case .decoding(.unreadableFile): code = 66
            case .decoding, .processing: code = 65
            case .encoding: code = 70
            case .cache: code = 74
            case .download, .pipeline: code = 1
            }
        case let error as WriteFailure:
            message = error.description
            code = 73
        default:
            message = "\(error)"
            code = 70
        }
        printError("error: \(message)")
        return ExitCode(code)
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line.replacingOccurrences(of: "\n", with: " ") + "\n").utf8))
    }
}

/// The output file could not be written.
struct WriteFailure: Error, CustomStringConvertible {
    let path: String
    let message: String
    var description: String { "cannot write \(path): \(message)" }
}
