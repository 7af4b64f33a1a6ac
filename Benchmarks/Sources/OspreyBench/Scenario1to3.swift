import Foundation
import Osprey
import Synchronization

// MARK: 1. Memory-cache hit through the pipeline

func scenario1(reps: Int) async throws -> [Figure] {
    let n = envInt("S1_LOOKUPS", 1_000_000)
    let image = try tinyImage()
    let cache = benchCache("s1")
    let urls = (0..<100).map { URL(string: "https://images.example.com/photos/\($0).jpg")! }
    let sources = urls.map { ImageSource.url($0) }
    let keys = urls.map(\.absoluteString)
    for key in keys { await cache.store(image, forKey: key, toDisk: false) }
    let pipeline = ImagePipeline(cache: cache, downloader: ImageDownloader(loader: InstantLoader(data: try tinyPNG())))
    let bare = Mutex<[String: Image]>(Dictionary(uniqueKeysWithValues: keys.map { ($0, image) }))
    var bareT: [Double] = [], syncT: [Double] = [], asyncT: [Double] = []
    var sink = 0
    for _ in 0..<reps {
        bareT.append(
            await time {
                for i in 0..<n { if let hit = bare.withLock({ $0[keys[i % 100]] }) { sink &+= hit.width } }
            } / Double(n) * 1e9)
        syncT.append(
            await time {
                for i in 0..<n { if let hit = pipeline.cachedImage(for: sources[i % 100]) { sink &+= hit.width } }
            } / Double(n) * 1e9)
        asyncT.append(
            try await time {
                for i in 0..<n { sink &+= try await pipeline.image(for: sources[i % 100]).image.width }
            } / Double(n) * 1e9)
    }
    precondition(sink == 3 * n * reps, "every lookup must hit")
    let goal = "≤ 3× bare"
    return [
        Figure(scenario: 1, name: "bare Mutex<[String: Image]> lookup", unit: "ns/lookup", samples: bareT),
        Figure(
            scenario: 1, name: "pipeline.cachedImage(for:) (sync)", unit: "ns/lookup", samples: syncT,
            baseline: "bare Mutex dict", baselineSamples: bareT, goal: goal, goalMet: { $0.ratio! <= 3 }),
        Figure(
            scenario: 1, name: "await pipeline.image(for:) (async)", unit: "ns/lookup", samples: asyncT,
            baseline: "bare Mutex dict", baselineSamples: bareT, goal: goal, goalMet: { $0.ratio! <= 3 })
    ]
}

// MARK: 2. Miss start

func scenario2(reps: Int) async throws -> [Figure] {
    let n = envInt("S2_REQUESTS", 20_000)
    let concurrent = envInt("S2_CONCURRENT", 20_000)
    let png = try tinyPNG()
    let image = try tinyImage()
    let decoder = ImageDecoder()
    var decodeT: [Double] = [], seqT: [Double] = [], memT: [Double] = [], concT: [Double] = []
    // CPU seconds of the whole process (every thread) per request, for the rows started at once:
    // less moved by other work on a shared machine than their wall time.
    var concCPU: [Double] = []
    let options: [RequestOption] = [.storage(.memory)]
    // Nuke's shape has no disk cache in the way: no disk lookups (memory cache only).
    let memoryOnly: [RequestOption] = [.storage(.memory), .cachePolicy(.memoryOrLoad)]
    // S2_ROWS (default all): a comma-separated subset of decode, seq, mem, group,
    // so that a process-wide counter (perf stat) sees one row alone.
    let rows = Set(
        (ProcessInfo.processInfo.environment["S2_ROWS"] ?? "decode,seq,mem,group").split(separator: ",").map(String.init))
    // URLs no cache has seen, and a pipeline on the instant loader and the empty decoder: each
    // request is a miss that costs the pipeline's own work.
    func missSources(_ path: String, _ count: Int) -> [ImageSource] {
        (0..<count).map { ImageSource.url(URL(string: "https://images.example.com/\(path)/\($0).png")!) }
    }
    func missPipeline(_ cache: String) -> ImagePipeline {
        ImagePipeline(
            configuration: .init(
                cache: benchCache(cache), downloader: ImageDownloader(loader: InstantLoader(data: png)),
                decoder: EmptyDecoder(image: image)))
    }
    // One request at a time, each awaited before the next: µs per request.
    func oneAtATime(_ path: String, _ cache: String, _ options: [RequestOption]) async throws -> Double {
        let sources = missSources(path, n)
        let pipeline = missPipeline(cache)
        return try await time {
            for source in sources { blackHole(try await pipeline.image(for: source, options: options)) }
        } / Double(n) * 1e6
    }
    for rep in 0..<envInt("S2_REPS", reps) {
        if rows.contains("decode") {
            decodeT.append(
                try await time {
                    for _ in 0..<n { blackHole(try decoder.decode(png)) }
                } / Double(n) * 1e6)
        }

        if rows.contains("seq") { seqT.append(try await oneAtATime("s\(rep)", "s2", options)) }
        if rows.contains("mem") { memT.append(try await oneAtATime("m\(rep)", "s2m", memoryOnly)) }

        if rows.contains("group") {
            let concSources = missSources("c\(rep)", concurrent)
            let concPipeline = missPipeline("s2c")
            let concCPU0 = processCPU()
            concT.append(
                try await time {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for source in concSources { group.addTask { blackHole(try await concPipeline.image(for: source, options: memoryOnly)) } }
                        try await group.waitForAll()
                    }
                } / Double(concurrent) * 1e6)
            concCPU.append((processCPU() - concCPU0) / Double(concurrent) * 1e6)
            if ProcessInfo.processInfo.environment["S2_ORDER"] != nil { try await reportCompletionOrder(concSources, concPipeline, memoryOnly) }
        }

    }
    let goal = "≤ 5 µs/request"
    return [
        Figure(scenario: 2, name: "decode of the 1×1 PNG alone (ImageDecoder)", unit: "µs/request", samples: decodeT),
        Figure(
            scenario: 2, name: "miss, one at a time (call→completion)", unit: "µs/request", samples: seqT,
            baseline: "decode alone", baselineSamples: decodeT, goal: goal, goalMet: { $0.median <= 5 },
            note:
                "instant loader + empty decoder (ImagePipeline.Configuration.decoder), so this is the pipeline's own cost; the 1×1 PNG libvips decode is shown for scale"
        ),
        Figure(
            scenario: 2, name: "miss, one at a time, memory cache only", unit: "µs/request", samples: memT,
            baseline: "with disk lookups", baselineSamples: seqT, goal: goal, goalMet: { $0.median <= 5 },
            note: "options .storage(.memory) + .cachePolicy(.memoryOrLoad): no disk lookups, as in Nuke's benchmark (no disk cache)"),
        Figure(
            scenario: 2, name: "miss, \(concurrent) started at once (wall/n), memory cache only", unit: "µs/request", samples: concT,
            baseline: "decode alone", baselineSamples: decodeT, goal: goal, goalMet: { $0.median <= 5 },
            note:
                "all requests started at once as Swift tasks of a task group (the group's own task per request is included); instant loader, empty decoder, no disk cache; default downloader (6 loads at a time)"
        ),
        Figure(scenario: 2, name: "CPU of miss, \(concurrent) started at once (wall/n), memory cache only", unit: "CPU µs/request", samples: concCPU)
    ].filter { !$0.samples.isEmpty }
}

// MARK: 3. Memory storage

func scenario3(reps: Int) async throws -> [Figure] {
    let n = envInt("S3_OPS", 100_000)
    let image = try tinyImage()
    let keys = (0..<n).map { "https://images.example.com/photos/\($0).jpg" }
    let missing = (0..<n).map { "https://images.example.com/missing/\($0).jpg" }
    let unlimited = MemoryStorage.Config(totalCostLimit: Int.max / 4, countLimit: .max)
    var results: [String: [Double]] = [:]
    func add(_ name: String, _ seconds: Double, ops: Int) { results[name, default: []].append(seconds / Double(ops) * 1e9) }
    var sink = 0
    for _ in 0..<reps {
        // write
        let storage = MemoryStorage.Backend<Image>(config: unlimited)
        add("write", try await time { for key in keys { try storage.store(image, forKey: key, cost: 1) } }, ops: n)
        let bare = Mutex<[String: Image]>([:])
        add("bare write", await time { for key in keys { bare.withLock { $0[key] = image } } }, ops: n)
        // hit
        add("hit", await time { for key in keys { if let v = storage.value(forKey: key) { sink &+= v.width } } }, ops: n)
        add("bare hit", await time { for key in keys { if let v = bare.withLock({ $0[key] }) { sink &+= v.width } } }, ops: n)
        // miss
        add("miss", await time { for key in missing { if storage.value(forKey: key) != nil { sink &+= 1 } } }, ops: n)
        add("bare miss", await time { for key in missing { if bare.withLock({ $0[key] }) != nil { sink &+= 1 } } }, ops: n)
        // eviction by cost: limit 10,000 cost units, every entry costs 1 → 90% of the writes evict
        let small = MemoryStorage.Backend<Image>(config: MemoryStorage.Config(totalCostLimit: 10_000, countLimit: .max))
        add("write with eviction", try await time { for key in keys { try small.store(image, forKey: key, cost: 1) } }, ops: n)
        precondition(small.count <= 10_000)
        // concurrent reads
        for tasks in [1, 2, 8] {
            add(
                "hit, \(tasks) tasks",
                await time {
                    await withTaskGroup(of: Int.self) { group in
                        for t in 0..<tasks {
                            group.addTask {
                                var local = 0
                                for i in 0..<n { if let v = storage.value(forKey: keys[(i &+ t &* 7919) % n]) { local &+= v.width } }
                                return local
                            }
                        }
                        for await local in group { sink &+= local }
                    }
                }, ops: n * tasks)
            let bareShared = BareDict(keys: keys, image: image)
            add(
                "bare hit, \(tasks) tasks",
                await time {
                    await withTaskGroup(of: Int.self) { group in
                        for t in 0..<tasks {
                            group.addTask {
                                var local = 0
                                for i in 0..<n { if let v = bareShared.value(keys[(i &+ t &* 7919) % n]) { local &+= v.width } }
                                return local
                            }
                        }
                        for await local in group { sink &+= local }
                    }
                }, ops: n * tasks)
        }
    }
    blackHole(sink)
    var figures = [
        Figure(
            scenario: 3, name: "write (100k distinct keys)", unit: "ns/op", samples: results["write"]!, baseline: "bare Mutex dict write",
            baselineSamples: results["bare write"]!),
        Figure(
            scenario: 3, name: "hit", unit: "ns/op", samples: results["hit"]!, baseline: "bare Mutex dict hit", baselineSamples: results["bare hit"]!),
        Figure(
            scenario: 3, name: "miss", unit: "ns/op", samples: results["miss"]!, baseline: "bare Mutex dict miss",
            baselineSamples: results["bare miss"]!),
        Figure(
            scenario: 3, name: "write with eviction by cost (90% evict)", unit: "ns/op", samples: results["write with eviction"]!,
            baseline: "write without eviction", baselineSamples: results["write"]!)
    ]
    for tasks in [1, 2, 8] {
        figures.append(
            Figure(
                scenario: 3, name: "hit, \(tasks) concurrent task(s) (time/total ops)", unit: "ns/op", samples: results["hit, \(tasks) tasks"]!,
                baseline: "bare Mutex dict, \(tasks) task(s)", baselineSamples: results["bare hit, \(tasks) tasks"]!))
    }
    return figures
}

/// A bare `Mutex<[String: Image]>` shared between tasks.
final class BareDict: Sendable {
    let storage: Mutex<[String: Image]>
    init(keys: [String], image: Image) { storage = Mutex(Dictionary(uniqueKeysWithValues: keys.map { ($0, image) })) }
    func value(_ key: String) -> Image? { storage.withLock { $0[key] } }
}

/// Prints how far from first-started-first-received the children of a task group are received:
/// the mean number of older children not yet received when one is. The Swift runtime detaches a
/// received child by walking the group's child list from its oldest, so this is the mean walk
/// (a diagnostic of scenario 2's task-group row, run with S2_ORDER=1; not timed).
func reportCompletionOrder(_ sources: [ImageSource], _ pipeline: ImagePipeline, _ options: [RequestOption]) async throws {
    let again = sources.map { ImageSource.url(URL(string: $0.cacheKey + "?again")!) }
    var order: [Int] = []
    order.reserveCapacity(again.count)
    try await withThrowingTaskGroup(of: Int.self) { group in
        for (index, source) in again.enumerated() {
            group.addTask {
                blackHole(try await pipeline.image(for: source, options: options))
                return index
            }
        }
        for try await index in group { order.append(index) }
    }
    // Fenwick tree over indices: how many received children are older than each one received.
    var tree = [Int](repeating: 0, count: order.count + 1)
    var walked = 0
    for index in order {
        var i = index, olderDone = 0
        while i > 0 {
            olderDone += tree[i]
            i -= i & -i
        }
        walked += index - olderDone
        i = index + 1
        while i <= order.count {
            tree[i] += 1
            i += i & -i
        }
    }
    let firstTenth = order.prefix(order.count / 10).filter { $0 >= order.count / 10 }.count
    print(
        "S2_ORDER: sizes ImageResult \(MemoryLayout<ImageResult>.size), OspreyError \(MemoryLayout<OspreyError>.size), ImageSource \(MemoryLayout<ImageSource>.size)"
    )
    print(
        "S2_ORDER: \(order.count) children; mean older children not yet received when one is: \(Double(walked) / Double(order.count)); of the first tenth received, \(firstTenth) were not among the first tenth started"
    )
}
