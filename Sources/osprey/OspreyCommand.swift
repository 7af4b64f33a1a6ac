import ArgumentParser
import Foundation
import Osprey

/// The `osprey` command-line tool.
@main
struct OspreyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "osprey",
        abstract: "Download, process and cache images on Linux.",
        discussion: """
            Exit codes: 0 success, 64 usage error, 65 undecodable input or a processor that cannot \
            apply to it, 66 unreadable input file, 70 encoding failure, 73 output not writable.
            """,
        version: ospreyVersion,
        subcommands: [InfoCommand.self, ConvertCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self, ServeCommand.self]
    )
}
