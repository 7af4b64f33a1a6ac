import AsyncHTTPClient
import Foundation
import NIOCore
import Osprey

// MARK: 4. Disk storage

func scenario4(reps: Int) async throws -> [Figure] {
    let writes = envInt("S4_WRITES", 1_000)
    let reads = envInt("S4_READS", 10_000)
    let trimEntries = envInt("S4_TRIM", 10_000)
    let openEntries = envInt("S4_OPEN", 100_000)
    var payload = Data(count: 256 * 1024)
    payload.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) } }
    let small = payload.prefix(4 * 1024)
    let mb = Double(payload.count) / 1_048_576
    let smallMB = Double(small.count) / 1_048_576
    var wO: [Double] = [], wSafe: [Double] = [], wPlain: [Double] = [], wHop: [Double] = [], rO: [Double] = [], rP: [Double] = []
    var sO: [Double] = [], sP: [Double] = [], tO: [Double] = [], tP: [Double] = [], oO: [Double] = []
    for rep in 0..<reps {
        let dir = makeTempDir("s4")
        let disk = DiskStorage.Backend(config: DiskStorage.Config(name: "s4", directory: dir, sizeLimit: Int.max / 4, cleansOnOpen: false))
        await disk.waitForPendingWork()
        let keys = (0..<writes).map { "https://images.example.com/big/\($0).jpg" }
        // The hand-written files go to the storage's own directory and temporary directory (`dir`,
        // `dir/.tmp`): new files' inodes then come from the same allocation group, whose cost varied
        // 2-4x between directories here (ext4's inode allocation skipping recently deleted inodes).
        // Interleaved write by write, the order rotating: the writers meet the same page-cache
        // writeback state (in phases, the one measured during writeback ran at device speed).
        sync()
        var plainT = Duration.zero, safeT = Duration.zero, ospreyT = Duration.zero, hopT = Duration.zero
        let clock = ContinuousClock()
        // The crash-safe write again, run on a queue and awaited as DiskStorage.store is: what
        // the hop of an async API costs, apart from the storage's own work.
        let hopQueue = DispatchQueue(label: "s4.hop", attributes: .concurrent)
        for i in 0..<writes {
            for slot in 0..<4 {
                let start = clock.now
                switch (slot + i + rep) % 4 {
                case 3:
                    let bytes = payload, base = dir.path
                    try await hopped(on: hopQueue) { try crashSafeWrite(bytes, temp: base + "/.tmp/hop-\(i)", to: base + "/hop-\(i)") }
                    hopT += clock.now - start
                case 0:
                    try posixWrite(payload, to: dir.path + "/plain-\(i)")
                    plainT += clock.now - start
                case 1:
                    try crashSafeWrite(payload, temp: dir.path + "/.tmp/safe-\(i)", to: dir.path + "/safe-\(i)")
                    safeT += clock.now - start
                default:
                    try await disk.store(payload, forKey: keys[i])
                    ospreyT += clock.now - start
                }
            }
        }
        await disk.waitForPendingWork()
        wPlain.append(Double(writes) * mb / plainT.seconds)
        wSafe.append(Double(writes) * mb / safeT.seconds)
        wO.append(Double(writes) * mb / ospreyT.seconds)
        wHop.append(Double(writes) * mb / hopT.seconds)
        let files = keys.map { disk.fileURL(forKey: $0) }
        var bytes = 0
        rP.append(Double(reads) * mb / (try await time { for i in 0..<reads { bytes &+= try Data(contentsOf: files[i % writes]).count } }))
        rO.append(Double(reads) * mb / (await time { for i in 0..<reads { bytes &+= await disk.value(forKey: keys[i % writes])?.count ?? 0 } }))
        precondition(bytes >= 2 * reads * payload.count, "every read must return the entry")
        // 4 KB entries
        let smallKeys = (0..<writes).map { "https://images.example.com/small/\($0).jpg" }
        for key in smallKeys { try await disk.store(small, forKey: key) }
        await disk.waitForPendingWork()
        let smallFiles = smallKeys.map { disk.fileURL(forKey: $0) }
        bytes = 0
        sP.append(Double(reads) * smallMB / (try await time { for i in 0..<reads { bytes &+= try Data(contentsOf: smallFiles[i % writes]).count } }))
        sO.append(
            Double(reads) * smallMB / (await time { for i in 0..<reads { bytes &+= await disk.value(forKey: smallKeys[i % writes])?.count ?? 0 } }))
        precondition(bytes >= 2 * reads * small.count, "every read must return the entry")
        try? FileManager.default.removeItem(at: dir)

        // trim: 10,000 entries of 1 KB, then a storage with a 1-byte limit removes them all
        let kilo = payload.prefix(1024)
        let trimDir = makeTempDir("s4trim")
        let filler = DiskStorage.Backend(config: DiskStorage.Config(name: "s4trim", directory: trimDir, sizeLimit: Int.max / 4, cleansOnOpen: false))
        for i in 0..<trimEntries { try await filler.store(kilo, forKey: "k\(i)") }
        await filler.waitForPendingWork()
        let trimmer = DiskStorage.Backend(config: DiskStorage.Config(name: "s4trim", directory: trimDir, sizeLimit: 1, cleansOnOpen: false))
        await trimmer.waitForPendingWork()
        var remaining = -1
        tO.append(await time { remaining = await trimmer.removeSizeExceeded().remainingCount })
        precondition(remaining == 0, "trim left \(remaining) of \(trimEntries) entries")
        let plainTrimDir = makeTempDir("s4plaintrim")
        for i in 0..<trimEntries { try posixWrite(kilo, to: plainTrimDir.path + "/k\(i)") }
        tP.append(
            try await time {
                for name in try FileManager.default.contentsOfDirectory(atPath: plainTrimDir.path) {
                    guard unlink(plainTrimDir.path + "/" + name) == 0 else { throw BenchError("unlink \(name): \(errno)") }
                }
            })
        try? FileManager.default.removeItem(at: trimDir)
        try? FileManager.default.removeItem(at: plainTrimDir)
    }
    // open: a directory of 100,000 entries of 100 bytes, filled once, opened `reps` times (warm)
    let openDir = makeTempDir("s4open")
    let openFiller = DiskStorage.Backend(config: DiskStorage.Config(name: "s4open", directory: openDir, sizeLimit: 0, cleansOnOpen: false))
    let hundred = payload.prefix(100)
    for i in 0..<openEntries { try await openFiller.store(hundred, forKey: "https://images.example.com/thumb/\(i).jpg") }
    await openFiller.waitForPendingWork()
    // Each open without a snapshot (the first after a crash) writes one; the opens with one reuse it.
    let snapshot = openDir.appendingPathComponent(".osprey-index-v2")
    var oScan: [Double] = []
    for withSnapshot in [false, true] {
        for _ in 0..<reps {
            if !withSnapshot { try? FileManager.default.removeItem(at: snapshot) }
            var count = 0
            let seconds = await time {
                let opened = DiskStorage.Backend(config: DiskStorage.Config(name: "s4open", directory: openDir, sizeLimit: 0))
                await opened.waitForPendingWork()
                count = opened.estimatedTotalSize / hundred.count
            }
            if withSnapshot { oO.append(seconds) } else { oScan.append(seconds) }
            precondition(count == openEntries, "open indexed \(count) of \(openEntries)")
            precondition(FileManager.default.fileExists(atPath: snapshot.path), "no index snapshot written")
        }
    }
    try? FileManager.default.removeItem(at: openDir)
    return [
        Figure(
            scenario: 4, name: "\(writes) writes of 256 KB (DiskStorage.store)", unit: "MB/s", samples: wO,
            baseline: "by hand, crash-safe: open/write/close of a temp file + rename", baselineSamples: wSafe,
            goal: "≥ 0.9×", goalMet: { ($0.ratio ?? 0) >= 0.9 },
            note: "no side fsyncs (Foundation's Data.write(to:) does on Linux, so it is not the baseline)"),
        Figure(
            scenario: 4, name: "\(writes) writes of 256 KB (DiskStorage.store)", unit: "MB/s", samples: wO,
            baseline: "plain POSIX open/write/close of the same bytes (no temp file)", baselineSamples: wPlain),
        Figure(
            scenario: 4, name: "\(writes) writes of 256 KB (DiskStorage.store)", unit: "MB/s", samples: wO,
            baseline: "by hand, crash-safe, run on a queue and awaited (one hop, as the store's)", baselineSamples: wHop),
        Figure(
            scenario: 4, name: "\(reads) reads of 256 KB (DiskStorage.value)", unit: "MB/s", samples: rO,
            baseline: "Data(contentsOf:) of the same files", baselineSamples: rP,
            goal: "≥ 0.8×", goalMet: { ($0.ratio ?? 0) >= 0.8 }, note: "files are in the page cache"),
        Figure(
            scenario: 4, name: "\(reads) reads of 4 KB (DiskStorage.value)", unit: "MB/s", samples: sO,
            baseline: "Data(contentsOf:) of the same files", baselineSamples: sP,
            goal: "≥ 0.7×", goalMet: { ($0.ratio ?? 0) >= 0.7 }),
        Figure(
            scenario: 4, name: "trim of \(trimEntries) entries (removeSizeExceeded)", unit: "s", samples: tO,
            baseline: "list + unlink of \(trimEntries) plain files", baselineSamples: tP,
            goal: "≤ 1.2×", goalMet: { ($0.ratio ?? .infinity) <= 1.2 }),
        Figure(
            scenario: 4, name: "open of \(openEntries) entries of 100 B with the index snapshot", unit: "s", samples: oO,
            goal: "< 1 s", goalMet: { $0.median < 1 }, note: "warm: the directory was just written; init + index built"),
        Figure(
            scenario: 4, name: "open of \(openEntries) entries of 100 B without a snapshot (after a crash)", unit: "s", samples: oScan,
            note: "every trailer read, then the snapshot written")
    ]
}

// MARK: 5. Coalescing

func scenario5(reps: Int, origin: OriginProcess) async throws -> [Figure] {
    let requests = envInt("S5_REQUESTS", 10_000)
    let distinct = 100
    let file = env("S5_FILE") ?? "hopper.jpg"
    var wall: [Double] = [], raw: [Double] = [], hitsSeen: [Double] = []
    let loader = DataLoader()
    for rep in 0..<reps {
        let base = "http://127.0.0.1:\(origin.port)/\(file)?rep=\(rep)&k="
        // baseline: the 100 distinct fetches alone, same client, 6 at a time (the downloader's limit)
        let rawURLs = (0..<distinct).map { base + "raw\($0)" }
        raw.append(
            try await time {
                try await forEachIndex(rawURLs.count, concurrency: 6) { i in
                    blackHole(try await rawFetch(rawURLs[i], client: loader.client))
                }
            })
        let before = try await originHits(origin, client: loader.client)
        let pipeline = ImagePipeline(cache: benchCache("s5"), downloader: ImageDownloader(loader: loader))
        let sources = (0..<distinct).map { ImageSource.url(URL(string: base + "p\($0)")!) }
        wall.append(
            try await time {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<requests {
                        group.addTask { blackHole(try await pipeline.image(for: sources[i % distinct], options: [.storage(.memory)])) }
                    }
                    try await group.waitForAll()
                }
            })
        let after = try await originHits(origin, client: loader.client)
        hitsSeen.append(Double(after - before))
    }
    try await loader.shutdown()
    return [
        Figure(
            scenario: 5, name: "\(requests) concurrent requests for \(distinct) URLs (\(file))", unit: "s", samples: wall,
            baseline: "\(distinct) raw fetches, same client", baselineSamples: raw,
            note: "pipeline also decodes the \(distinct) images; raw fetch does not"),
        Figure(
            scenario: 5, name: "origin hits per run", unit: "hits", samples: hitsSeen,
            goal: "= \(distinct)", goalMet: { $0.min == Double(distinct) && $0.max == Double(distinct) })
    ]
}

func originHits(_ origin: OriginProcess, client: HTTPClient) async throws -> Int {
    let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(origin.port)/__hits"), timeout: .seconds(10))
    let body = try await response.body.collect(upTo: 1024)
    return Int(String(buffer: body)) ?? -1
}

/// `body` on `queue`, awaited: the hop an async storage API makes.
func hopped(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        queue.async { continuation.resume(with: Result { try body() }) }
    }
}

/// A crash-safe write by hand: a temporary file (open, write, close), then a rename; no fsync.
func crashSafeWrite(_ data: Data, temp: String, to path: String) throws {
    try posixWrite(data, to: temp)
    guard rename(temp, path) == 0 else { throw BenchError("rename \(temp): \(errno)") }
}

/// A plain write: open, write, close; no fsync, no temp file.
func posixWrite(_ data: Data, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw BenchError("open \(path): \(errno)") }
    defer { close(fd) }
    try data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { throw BenchError("write \(path): \(errno)") }
            offset += written
        }
    }
}
