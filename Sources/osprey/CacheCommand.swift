import ArgumentParser
import Foundation
import Osprey

/// `osprey cache stats|clean|clear [--cache-dir DIR] [--size-limit BYTES] [--json]`: the disk cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and clean the disk cache.",
        discussion: """
            The default cache is the one ImageCache.default uses: $XDG_CACHE_HOME/osprey/default, \
            or ~/.cache/osprey/default. Exit codes: 0 success, 64 usage error, 74 a cache file could not be \
            read, written or removed.
            """,
        subcommands: [Stats.self, Clean.self, Clear.self, DebugWriteLoop.self]
    )

    /// Options every cache subcommand takes.
    struct Options: ParsableArguments {
        @Option(name: .customLong("cache-dir"), help: ArgumentHelp("The cache directory (default: the default cache's).", valueName: "DIR"))
        var cacheDirectory: String?

        @Option(
            name: .customLong("size-limit"),
            help: ArgumentHelp("The size limit in bytes; 0 = unlimited (default: 1 GiB, the library's default).", valueName: "BYTES"))
        var sizeLimit: Int = DiskStorage.Config().sizeLimit

        @Flag(help: "Print one JSON object instead of lines.")
        var json = false

        func validate() throws {
            guard sizeLimit >= 0 else { throw ValidationError("--size-limit must be 0 or more, got \(sizeLimit)") }
        }

        func storage(cleansOnOpen: Bool) -> DiskStorage.Backend {
            DiskStorage.Backend(
                config: DiskStorage.Config(
                    directory: cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) },
                    sizeLimit: sizeLimit, cleansOnOpen: cleansOnOpen))
        }

        func printJSON<T: Encodable>(_ value: T) throws {
            print(try JSONLine.string(value))
        }
    }

    /// `osprey cache stats`: entries, expired entries, total bytes and limit. Changes nothing.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the number of entries, their total size and the size limit.")

        @OptionGroup var options: Options

        func run() async throws {
            let stats = await options.storage(cleansOnOpen: false).statistics()
            if options.json {
                try options.printJSON(stats)
            } else {
                print(
                    """
                    directory: \(stats.directory)
                    entries: \(stats.entryCount)
                    expired: \(stats.expiredCount)
                    total-bytes: \(stats.totalSize)
                    size-limit: \(stats.sizeLimit == 0 ? "unlimited" : String(stats.sizeLimit))
                    """)
            }
        }
    }

    /// `osprey cache clean`: removes expired, damaged and over-limit entries and says which went.
    struct Clean: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove expired, damaged and over-limit entries, and print what went.",
            discussion: "Over the size limit, least recently used entries go until the total is at most 80% of the limit."
        )

        @OptionGroup var options: Options

        func run() async throws {
            let storage = options.storage(cleansOnOpen: false)
            let report = await storage.clean()
            if options.json {
                try options.printJSON(report)
                return
            }
            for entry in report.removed {
                print("removed \(entry.key ?? entry.fileName) (\(entry.size) bytes, \(entry.reason.rawValue))")
            }
            print(
                "removed \(report.removed.count) entries (\(report.removedSize) bytes); \(report.remainingCount) entries (\(report.remainingSize) bytes) remain"
            )
        }
    }

    /// `osprey cache clear`: removes every entry.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")

        @OptionGroup var options: Options

        struct Report: Codable {
            var removedEntries: Int
            var removedBytes: Int
        }

        func run() async throws {
            let storage = options.storage(cleansOnOpen: false)
            let before = await storage.statistics()
            do {
                try await storage.removeAll()
            } catch {
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
                throw ExitCode(74)
            }
            let report = Report(removedEntries: before.entryCount, removedBytes: before.totalSize)
            if options.json {
                try options.printJSON(report)
            } else {
                print("removed \(report.removedEntries) entries (\(report.removedBytes) bytes)")
            }
        }
    }

    /// Undocumented test helper: stores entries `entry-0`, `entry-1`, … in a loop, printing
    /// `stored <i>` after each, so that a test can SIGKILL it mid-write and check the cache after.
    /// Entry `i` holds `DebugWriteLoop.bytes(i, size:)`.
    struct DebugWriteLoop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "debug-write-loop", shouldDisplay: false)

        @Option(name: .customLong("cache-dir")) var cacheDirectory: String
        @Option var count: Int = 0
        @Option var size: Int = 1 << 20

        static func bytes(_ i: Int, size: Int) -> Data {
            Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7) })
        }

        func run() async throws {
            let storage = DiskStorage.Backend(config: DiskStorage.Config(directory: URL(fileURLWithPath: cacheDirectory), sizeLimit: 0))
            var i = 0
            while count == 0 || i < count {
                let entrySize = size + (i % 7) * 4_096
                try await storage.store(Self.bytes(i, size: entrySize), forKey: "entry-\(i)")
                FileHandle.standardOutput.write(Data("stored \(i)\n".utf8))
                i += 1
            }
        }
    }
}
