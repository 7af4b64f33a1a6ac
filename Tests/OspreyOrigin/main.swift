import Foundation
import OspreyTestSupport

// `OspreyOrigin DIR...`: the tests' loopback origin (``LoopbackOrigin``) as a process, serving the
// files of each DIR by name, for scripts that need an HTTP origin (scripts/gallery.sh). See
// `LoopbackOrigin.runAsProcess(directories:)` for its output and environment.
let directories = Array(CommandLine.arguments.dropFirst())
guard !directories.isEmpty, !directories.contains(where: { $0.hasPrefix("-") }) else {
    FileHandle.standardError.write(Data("usage: OspreyOrigin DIR... (ORIGIN_PORT, ORIGIN_LOG, ORIGIN_RATE in the environment)\n".utf8))
    exit(2)
}
try await LoopbackOrigin.runAsProcess(directories: directories)
