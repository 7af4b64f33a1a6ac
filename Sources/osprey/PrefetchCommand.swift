import ArgumentParser
import Foundation
import Osprey

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `osprey prefetch [URL... | --input FILE] [--concurrency N] [--process SPEC] [--keep-original] [--cache-dir DIR] [--json]`.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Load many images into the cache ahead of use.",
        discussion: """
            Sources already cached are skipped. On a terminal a progress bar is drawn on stderr; \
            otherwise one line per source. Exit 0 when nothing failed, 1 otherwise.
            """
    )

    @Argument(help: "Image URLs or paths.")
    var urls: [String] = []

    @Option(name: .long, help: ArgumentHelp("Read sources from FILE, one per line (- for stdin).", valueName: "FILE"))
    var input: String?

    @Option(name: .long, help: "Requests at once (default 5).")
    var concurrency: Int = 5

    @OptionGroup var pipelineOptions: PipelineOptions

    @Flag(help: "Print a JSON summary instead of text.")
    var json = false

    struct Summary: Codable {
        var total: Int
        var completed: Int
        var skipped: Int
        var failed: Int
        var failures: [String: String]
    }

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be positive") }
        guard !urls.isEmpty || input != nil else { throw ValidationError("give URLs or --input FILE") }
    }

    func run() async throws {
        var arguments = urls
        if let input {
            let text: String
            if input == "-" {
                text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            } else {
                guard let data = FileManager.default.contents(atPath: input) else {
                    CommandFailure.printError("error: cannot read \(input)")
                    throw ExitCode(66)
                }
                text = String(decoding: data, as: UTF8.self)
            }
            arguments += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty && !$0.hasPrefix("#")
            }
        }
        let sources = arguments.compactMap(PipelineOptions.source)
        let (pipeline, loader) = pipelineOptions.makePipeline()
        let prefetcher = ImagePrefetcher(options: pipelineOptions.requestOptions, pipeline: pipeline, maxConcurrentRequests: concurrency)
        let interactive = isatty(STDERR_FILENO) != 0 && !json
        let report = await prefetcher.prefetch(sources) { report, source, outcome, total in
            if interactive {
                FileHandle.standardError.write(Data(Self.bar(report, total: total).utf8))
            } else if !json {
                switch outcome {
                case .completed: print("completed \(source)")
                case .skipped: print("skipped \(source)")
                case .failed(let error): print("failed \(source): \(error)")
                }
            }
        }
        if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
        try? await loader.shutdown()
        let summary = Summary(
            total: sources.count, completed: report.completed.count, skipped: report.skipped.count,
            failed: report.failed.count,
            failures: Dictionary(report.failed.map { ($0.source.description, $0.error.description) }, uniquingKeysWith: { a, _ in a }))
        if json {
            print(try JSONLine.string(summary))
        } else {
            print("completed: \(summary.completed), skipped: \(summary.skipped), failed: \(summary.failed) of \(summary.total)")
        }
        if summary.failed > 0 { throw ExitCode(1) }
    }

    /// `\r[#########...........]  45/100  completed 40  skipped 3  failed 2`
    static func bar(_ report: ImagePrefetcher.Report, total: Int) -> String {
        let width = 30
        let done = report.finishedCount
        let filled = total == 0 ? width : width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "\r[\(bar)] \(done)/\(total)  completed \(report.completed.count)  skipped \(report.skipped.count)  failed \(report.failed.count)"
    }
}
