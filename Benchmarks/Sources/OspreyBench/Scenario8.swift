import AsyncHTTPClient
import CVipsBench
import Foundation
import Osprey

#if canImport(Glibc)
    import Glibc
#endif

// Scenario 8: the CLI as a user runs it. `osprey prefetch --input urls.txt --concurrency 4
// --process "thumbnail:256,format:jpeg:80" --cache-dir DIR`, a whole process (start included),
// against an nginx origin on loopback; versus, interleaved repetition by repetition: Osprey's own
// decoder on the same bytes in memory (the in-process limit), stock libvips
// (`vips_thumbnail_buffer` + `vips_jpegsave_buffer`, as imgproxy runs it) and the Python peer as
// a whole process.

/// The spec the CLI gets, and the same chain and output for the in-process baselines.
let cliSpec = "thumbnail:256,format:jpeg:80"

// MARK: - nginx origin

/// nginx serving directories on a loopback port, from a config generated under the scratch
/// directory (no access log, sendfile, one worker). Directory `i` is served under `/d<i>/`.
final class NginxOrigin {
    let process: Process
    let port: Int
    let directory: URL

    init(directories: [String]) async throws {
        guard let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first(where: FileManager.default.isExecutableFile) else {
            throw BenchError("nginx not found (apt-get install nginx-light; run.sh does)")
        }
        let directory = makeTempDir("nginx")
        let dir = directory.path
        var process = Process()
        var lastError = ""
        let loader = DataLoader()
        let probeName = try FileManager.default.contentsOfDirectory(atPath: directories[0]).filter { !$0.hasPrefix(".") }.sorted()[0]
        var ready: Int?
        for attempt in 0..<5 where ready == nil {
            let port = 20_000 + Int((UInt32(getpid()) &* 7919 &+ UInt32(attempt) &* 104_729) % 40_000)
            let locations = directories.enumerated().map { "        location /d\($0.offset)/ { alias \($0.element)/; }" }.joined(separator: "\n")
            let config = """
                \(getuid() == 0 ? "user root;" : "")
                worker_processes 1;
                daemon off;
                pid \(dir)/nginx.pid;
                error_log \(dir)/error.log warn;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    sendfile on;
                    tcp_nopush on;
                    tcp_nodelay on;
                    keepalive_requests 1000000;
                    keepalive_timeout 120s;
                    client_body_temp_path \(dir)/body;
                    proxy_temp_path \(dir)/proxy;
                    types { image/jpeg jpg jpeg; image/png png; image/gif gif; image/webp webp; image/avif avif; image/tiff tif tiff; }
                    default_type application/octet-stream;
                    server {
                        listen 127.0.0.1:\(port);
                \(locations)
                    }
                }

                """
            try config.write(toFile: dir + "/nginx.conf", atomically: true, encoding: .utf8)
            process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-e", dir + "/error.log", "-p", dir, "-c", dir + "/nginx.conf"]
            try process.run()
            // Ready once it serves a file; a port already taken makes nginx exit.
            for _ in 0..<100 where process.isRunning && ready == nil {
                if let body = try? await rawFetch("http://127.0.0.1:\(port)/d0/\(probeName)", client: loader.client), body.readableBytes > 0 {
                    ready = port
                } else {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            if ready != nil { break }
            lastError = (try? String(contentsOfFile: dir + "/error.log", encoding: .utf8)) ?? "no error log"
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            if !lastError.contains("in use") { break }
        }
        try? await loader.shutdown()
        guard let ready else { throw BenchError("nginx did not start: \(lastError)") }
        self.port = ready
        self.process = process
        self.directory = directory
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

// MARK: - Whole processes, measured

struct ProcessRun {
    var seconds: Double
    var peakMB: Double
    /// User + system CPU seconds of the child (its own `wait4` rusage).
    var cpuSeconds: Double
    var status: Int32
    var stdout: Data
}

/// Runs `arguments` as a child process under `/usr/bin/time -f "%M %U %S"` (the peak RSS and CPU
/// time of the child alone: its own `wait4` rusage) and waits for it with `waitpid`, with `environment` as its
/// environment. Wall time is from spawn to exit; stdout goes to a file read afterwards.
func runMeasured(_ arguments: [String], environment: [String: String]) throws -> ProcessRun {
    let dir = makeTempDir("proc")
    let rssPath = dir.appendingPathComponent("rss").path, outPath = dir.appendingPathComponent("stdout").path
    let argv = ["/usr/bin/time", "-f", "%M %U %S", "-o", rssPath] + arguments
    let envp = environment.map { "\($0.key)=\($0.value)" }
    var cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    var cEnv: [UnsafeMutablePointer<CChar>?] = envp.map { strdup($0) } + [nil]
    defer { for p in cArgv + cEnv { free(p) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArgv, &cEnv)
    guard spawned == 0 else { throw BenchError("posix_spawn \(argv[0]) failed: \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let seconds = (clock.now - start).seconds
    let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let rssText = (try? String(contentsOfFile: rssPath, encoding: .utf8)) ?? ""
    // /usr/bin/time writes "Command exited with non-zero status N" first when the child failed.
    let fields = rssText.split(separator: "\n").last.map { $0.split(separator: " ").compactMap { Double($0) } } ?? []
    let kb = fields.count == 3 ? fields[0] : .nan
    return ProcessRun(
        seconds: seconds, peakMB: kb / 1024, cpuSeconds: fields.count == 3 ? fields[1] + fields[2] : .nan, status: exitStatus,
        stdout: FileManager.default.contents(atPath: outPath) ?? Data())
}

/// The environment of a user's shell: the harness's own, without the libvips concurrency it sets
/// for the in-process baselines.
func userEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["VIPS_CONCURRENCY"] = nil
    return environment
}

/// `osprey prefetch` over `urls`, 4 at a time, into a fresh cache directory. Checks that it
/// exited 0 and completed every URL.
func cliRun(cli: String, urls: [String], concurrency: Int) throws -> ProcessRun {
    let dir = makeTempDir("cli")
    let list = dir.appendingPathComponent("urls.txt").path
    try (urls.joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
    let run = try runMeasured(
        [
            cli, "prefetch", "--input", list, "--concurrency", "\(concurrency)", "--process", cliSpec,
            "--cache-dir", dir.appendingPathComponent("cache").path, "--json"
        ], environment: userEnvironment())
    struct Summary: Decodable {
        var total: Int
        var completed: Int
        var failed: Int
    }
    let summary = try? JSONDecoder().decode(Summary.self, from: run.stdout)
    guard run.status == 0, let summary, summary.completed == urls.count else {
        throw BenchError("osprey prefetch exited with \(run.status): \(String(decoding: run.stdout.prefix(2000), as: UTF8.self))")
    }
    // The cache directory stays until the harness exits (see ospreyRun).
    return run
}

/// The peer as a whole process (interpreter start and imports included): `peer.py --urls LIST
/// --out DIR --workers N`. Checks that it processed every URL.
func peerProcessRun(_ peer: Peer, urls: [String], workers: Int) throws -> ProcessRun {
    let dir = makeTempDir("peer8")
    let list = dir.appendingPathComponent("urls.txt").path
    try urls.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
    let run = try runMeasured(
        [
            peer.python, peer.script, "--urls", list, "--out", dir.appendingPathComponent("out").path,
            "--workers", "\(workers)"
        ], environment: userEnvironment())
    let report = try? JSONDecoder().decode(Peer.Report.self, from: run.stdout)
    guard run.status == 0, let report, report.ok == urls.count else {
        throw BenchError("peer exited with \(run.status): \(String(decoding: run.stdout.prefix(2000), as: UTF8.self))")
    }
    return run
}

// MARK: - In-process baselines

/// Stock libvips on `data`: `vips_thumbnail_buffer` into 256×256 + `vips_jpegsave_buffer` Q 80.
/// The JPEG's size, or nil when libvips failed.
func stockThumbnailJPEG(_ data: Data) -> Int? {
    data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
        var thumbnail: UnsafeMutablePointer<VipsImage>?
        guard osprey_bench_thumbnail_buffer(bytes.baseAddress, bytes.count, &thumbnail, 256, 256) == 0, let thumbnail else { return nil }
        defer { osprey_bench_unref(thumbnail) }
        var out: UnsafeMutableRawPointer?
        var length = 0
        guard osprey_bench_jpegsave_buffer(thumbnail, &out, &length, 80) == 0 else { return nil }
        osprey_bench_free(out)
        return length
    }
}

/// The in-process limit of the CLI's image work: Osprey's decoder with the CLI's decoding options
/// (first frame only when the spec's format cannot animate, as the CLI decodes) and chain (the
/// spec's steps, then, as the CLI's `format:` step does, alpha flattened onto white for JPEG),
/// then the CLI's cache serializer (JPEG q80).
func cliLimitRun(_ datas: [Data], threads: Int) async -> RunResult {
    let spec = try! ProcessingSpec(parsing: cliSpec)
    let serializer = DefaultCacheSerializer(quality: spec.quality ?? 80, preferredFormat: spec.format)
    let decoder = ImageDecoder(options: DecodingOptions(firstFrameOnly: spec.format.map { !$0.supportsAnimation } ?? false))
    let flattens = spec.format.map { !$0.holdsAlpha } ?? false
    return await threadsRun(datas, threads: threads) { data in
        var image = try! decoder.decode(data, processedBy: spec.processor)
        if flattens && image.hasAlpha { image = try! ImageProcessors.Composition.pad().process(image) }
        blackHole(try! serializer.data(with: image, original: data, processorIdentifier: spec.processor.identifier))
    }
}

func stockRun(_ datas: [Data], threads: Int) async -> RunResult {
    await threadsRun(datas, threads: threads) { data in
        precondition(stockThumbnailJPEG(data) != nil)
    }
}

// MARK: - Scenario

func scenario8(reps: Int, classes: [ImageClass], cli: String, peer: Peer?) async throws -> ([Figure], [String]) {
    let concurrency = envInt("E2E_CONCURRENCY", 4)
    let threads = envInt("LIMIT_THREADS", ProcessInfo.processInfo.activeProcessorCount)
    var notes: [String] = []
    // Every participant processes the same files: those stock libvips can thumbnail too.
    var sets: [(imageClass: ImageClass, urlCount: Int)] = []
    let excluded = Set((env("S8_EXCLUDE") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    for var imageClass in classes {
        if !excluded.isEmpty {
            notes.append(
                "scenario 8, \(imageClass.name): left out (S8_EXCLUDE): \(imageClass.files.filter(excluded.contains).joined(separator: ", "))")
            imageClass.files.removeAll(where: excluded.contains)
        }
        let stockFailed = imageClass.files.filter { stockThumbnailJPEG(imageClass.bytes[$0]!) == nil }
        if !stockFailed.isEmpty {
            notes.append("scenario 8, \(imageClass.name): left out (stock libvips cannot thumbnail): \(stockFailed.joined(separator: ", "))")
        }
        imageClass.files.removeAll(where: stockFailed.contains)
        let isSmall = imageClass.name.hasPrefix("small")
        let wanted = isSmall ? envInt("S8_SMALL_URLS", 420) : envInt("S8_LARGE_URLS", 96)
        imageClass.repeats = max(1, (wanted + imageClass.files.count - 1) / imageClass.files.count)
        sets.append((imageClass, imageClass.files.count * imageClass.repeats))
    }
    let origin = try await NginxOrigin(directories: sets.map(\.imageClass.directory))
    defer { origin.stop() }
    var figures: [Figure] = []
    // The CLI's own floor: the same number of URLs of the smallest test image.
    let floorFile = sets.first.flatMap { set in set.imageClass.files.min { set.imageClass.bytes[$0]!.count < set.imageClass.bytes[$1]!.count } }
    for (index, (imageClass, count)) in sets.enumerated() {
        let datas = (0..<imageClass.repeats).flatMap { _ in imageClass.files.map { imageClass.bytes[$0]! } }
        func urls(_ tag: String, limit: Int = .max) -> [String] {
            var urls: [String] = []
            for r in 0..<imageClass.repeats {
                for name in imageClass.files { urls.append("http://127.0.0.1:\(origin.port)/d\(index)/\(name)?r=\(tag)-\(r)") }
            }
            return Array(urls.prefix(limit))
        }
        var cliRate: [Double] = [], limit: [Double] = [], stock: [Double] = [], peerRate: [Double] = []
        var ospreyMB: [Double] = [], peerMB: [Double] = [], cliSeconds: [Double] = [], floorMB: [Double] = []
        var ospreyCPU: [Double] = [], peerCPU: [Double] = [], limitCPU: [Double] = []
        var ospreyCores: [Double] = [], limitCores: [Double] = []
        // Warm-up (not counted): page cache, nginx, the binaries and the interpreter.
        _ = try cliRun(cli: cli, urls: urls("warm", limit: count / 4 + 1), concurrency: concurrency)
        if let peer { _ = try peerProcessRun(peer, urls: urls("warmpeer", limit: count / 4 + 1), workers: concurrency) }
        _ = await cliLimitRun(datas, threads: threads)
        _ = await stockRun(datas, threads: threads)
        for rep in 0..<reps {
            let n = Double(count)
            // Each step starts with the previous steps' files written back (sync, not timed): the
            // CLI and the peer write hundreds of files, whose writeback would otherwise land in
            // whatever runs next.
            sync()
            let l = await cliLimitRun(datas, threads: threads)
            limit.append(n / l.seconds)
            limitCPU.append((l.cpuSeconds ?? .nan) * 1000 / n)
            limitCores.append((l.cpuSeconds ?? .nan) / l.seconds)
            sync()
            let s = await stockRun(datas, threads: threads)
            stock.append(n / s.seconds)
            sync()
            let c = try cliRun(cli: cli, urls: urls("cli\(rep)"), concurrency: concurrency)
            cliRate.append(n / c.seconds)
            ospreyMB.append(c.peakMB)
            cliSeconds.append(c.seconds)
            ospreyCPU.append(c.cpuSeconds * 1000 / n)
            ospreyCores.append(c.cpuSeconds / c.seconds)
            if let peer {
                sync()
                let p = try peerProcessRun(peer, urls: urls("peer\(rep)"), workers: concurrency)
                peerRate.append(n / p.seconds)
                peerMB.append(p.peakMB)
                peerCPU.append(p.cpuSeconds * 1000 / n)
            }
            if index > 0, let floorFile {
                sync()
                let floorURLs = (0..<count).map { "http://127.0.0.1:\(origin.port)/d0/\(floorFile)?r=floor\(rep)-\($0)" }
                floorMB.append(try cliRun(cli: cli, urls: floorURLs, concurrency: concurrency).peakMB)
            }
        }
        let isSmall = imageClass.name.hasPrefix("small")
        let label = "\(imageClass.name): \(imageClass.files.count) files × \(imageClass.repeats) = \(count) URLs"
        let cliName = "\(label), osprey prefetch (whole process, \(concurrency) at a time)"
        figures.append(
            Figure(
                scenario: 8, name: "\(cliName) vs in-process limit", unit: "images/s", samples: cliRate,
                baseline: "Osprey's decoder + CLI serializer on the bytes in memory (\(threads) threads, vips concurrency 1)", baselineSamples: limit,
                goal: "≥ 0.85× limit", goalMet: { $0.ratio! >= 0.85 },
                note: "wall time from spawn to exit: \(cliSeconds.map { String(format: "%.2f s", $0) }.joined(separator: ", "))"))
        if peer != nil {
            let goal = isSmall ? 1.0 : 2.5
            figures.append(
                Figure(
                    scenario: 8, name: "\(cliName) vs peer", unit: "images/s", samples: cliRate,
                    baseline: "peer.py whole process (Python requests + ThreadPoolExecutor(\(concurrency)) + Pillow)", baselineSamples: peerRate,
                    goal: "≥ \(goal)× peer", goalMet: { $0.ratio! >= goal }))
        }
        figures.append(
            Figure(
                scenario: 8, name: "\(cliName) vs stock libvips", unit: "images/s", samples: cliRate,
                baseline: "vips_thumbnail_buffer + vips_jpegsave_buffer (\(threads) threads, vips concurrency 1)", baselineSamples: stock,
                goal: isSmall ? nil : "≥ 0.85× stock libvips", goalMet: isSmall ? nil : { (f: Figure) in f.ratio! >= 0.85 }))
        figures.append(
            Figure(
                scenario: 8, name: "\(label), osprey prefetch CPU per image", unit: "ms", samples: ospreyCPU,
                baseline: peer != nil ? "peer.py CPU per image (whole process)" : nil, baselineSamples: peer != nil ? peerCPU : nil,
                note:
                    "user + system CPU of the whole process (/usr/bin/time %U + %S) over the URLs: the cores' work; the rate figures also count the idle time"
            ))
        // Rate = cores in use / CPU per image: these two split the ratio to the limit into the
        // CLI's extra work per image and the cores it leaves idle.
        figures.append(
            Figure(
                scenario: 8, name: "\(label), osprey prefetch CPU per image vs the limit's", unit: "ms", samples: ospreyCPU,
                baseline: "in-process limit's CPU per image (the harness's process CPU clock over the run)", baselineSamples: limitCPU,
                note: "the CLI's work beyond decode + encode: process start, HTTP, the result's cache file, hand-offs"))
        figures.append(
            Figure(
                scenario: 8, name: "\(label), osprey prefetch cores in use", unit: "cores", samples: ospreyCores,
                baseline: "in-process limit's cores in use (\(threads) threads)", baselineSamples: limitCores,
                note: "CPU seconds over wall seconds; the rest of the \(ProcessInfo.processInfo.activeProcessorCount) cores was idle or ran nginx"))
        figures.append(
            Figure(
                scenario: 8, name: "\(label), osprey prefetch peak RSS", unit: "MB", samples: ospreyMB,
                baseline: peer != nil ? "peer.py peak RSS (whole process)" : nil, baselineSamples: peer != nil ? peerMB : nil,
                note:
                    "maximum resident set of the process (/usr/bin/time %M); one 4000×3000 image's full-size pixels are 48 MB (RGBA), \(concurrency) in flight 192 MB"
            ))
        if !floorMB.isEmpty, let floorFile {
            figures.append(
                Figure(
                    scenario: 8, name: "\(label), osprey prefetch peak RSS minus the CLI's floor", unit: "MB",
                    samples: zip(ospreyMB, floorMB).map { $0 - $1 },
                    goal: "< 48 MB (one full-size 4000×3000 RGBA image)", goalMet: { $0.max < 48 },
                    note:
                        "per repetition; floor: the CLI over \(count) URLs of \(floorFile) (\(floorMB.map { String(format: "%.0f", $0) }.joined(separator: ", ")) MB); the difference also holds the originals and thumbnails in flight"
                ))
        }
    }
    return (figures, notes)
}
