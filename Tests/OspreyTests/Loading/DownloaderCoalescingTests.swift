import Foundation
import OspreyTestSupport
import Testing

@testable import Osprey

@Suite("Downloader coalescing and cancellation", .timeLimit(.minutes(5)))
struct DownloaderCoalescingTests {
    @Test("100 concurrent requests for one URL: one server hit, 100 results")
    func hundredCallersOneHit() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/g100/one")
            let results = Collector<DownloadOutcome>()
            for _ in 0..<100 {
                downloader.download(url) { results.append($0) }
            }
            #expect(await server.waitUntil { $0.hits["/gated/g100/one"] == 1 })
            server.openGate("g100")
            let outcomes = await results.wait(for: 100)
            #expect(outcomes.count == 100)
            let failures = outcomes.compactMap { outcome -> String? in
                if case .failure(let error) = outcome { return error.description }
                return outcome.value?.data == server.image ? nil : "other bytes"
            }
            #expect(failures.isEmpty, "\(failures.count) callers failed: \(Set(failures))")
            #expect(server.hits("/gated/g100/one") == 1)
        }
    }

    @Test("100 concurrent async callers coalesce too")
    func hundredAsyncCallers() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/ga/async")
            try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await downloader.download(url).data }
                }
                #expect(await server.waitUntil { $0.hits["/gated/ga/async"] == 1 })
                // Open the gate only once all 100 callers have joined the one task.
                try await eventually("100 callers on the download") { downloader.jobs.inFlight.first.map(downloader.callers(of:))?.count ?? 0 >= 100 }
                server.openGate("ga")
                var count = 0
                for try await data in group {
                    #expect(data == server.image)
                    count += 1
                }
                #expect(count == 100)
            }
            #expect(server.hits("/gated/ga/async") == 1)
        }
    }

    @Test("callers whose requests differ (headers, credentials, validator) do not share a task")
    func differentRequestsDoNotCoalesce() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/diff/x")
            let results = Collector<DownloadOutcome>()
            let variants = [
                DownloadOptions(),
                DownloadOptions(priority: .high, callbackQueue: .immediate, retryFailed: true),  // same request
                DownloadOptions(headers: ["X-Variant": "1"]),
                DownloadOptions(credentials: DownloadCredentials(user: "u", password: "p")),
                DownloadOptions(validator: CacheValidator(etag: "\"zzz\""))
            ]
            for options in variants { downloader.download(url, options: options) { results.append($0) } }
            #expect(await server.waitUntil { $0.hits["/gated/diff/x"] == 4 })
            server.openGate("diff")
            #expect(await results.wait(for: 5).allSatisfy { $0.value?.data == server.image })
            #expect(server.hits("/gated/diff/x") == 4)
        }
    }

    @Test("cancelling 99 of 100 callers keeps the download for the last")
    func cancelNinetyNine() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/g99/x")
            let cancelled = Collector<DownloadOutcome>()
            let survivor = Collector<DownloadOutcome>()
            var tasks: [DownloadTask] = []
            for _ in 0..<99 {
                tasks.append(downloader.download(url) { cancelled.append($0) })
            }
            downloader.download(url) { survivor.append($0) }
            #expect(await server.waitUntil { $0.hits["/gated/g99/x"] == 1 })
            tasks.forEach { $0.cancel() }
            let cancelledOutcomes = await cancelled.wait(for: 99)
            for outcome in cancelledOutcomes {
                guard case .cancelled(let cancelledURL)? = outcome.downloadReason else {
                    Issue.record("expected cancellation, got \(outcome)")
                    continue
                }
                #expect(cancelledURL == url)
            }
            server.openGate("g99")
            let last = await survivor.wait(for: 1)
            #expect(last.first?.value?.data == server.image)
            #expect(server.hits("/gated/g99/x") == 1)
            #expect(server.snapshot.aborted.isEmpty)
        }
    }

    @Test("cancelling every caller cancels the transfer: the server sees the connection close")
    func cancelAllStopsTransfer() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/never/all")
            let results = Collector<DownloadOutcome>()
            let tasks = (0..<3).map { _ in downloader.download(url) { results.append($0) } }
            #expect(await server.waitUntil { $0.hits["/gated/never/all"] == 1 })
            tasks.forEach { $0.cancel() }
            let outcomes = await results.wait(for: 3)
            #expect(outcomes.allSatisfy { $0.downloadReason?.isCancelled == true })
            #expect(await server.waitUntil { $0.aborted.contains("/gated/never/all") })
        }
    }

    @Test("cancel(url:) and cancelAll() cancel every caller")
    func cancelByURLAndAll() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let first = server.url("/gated/never/u1")
            let second = server.url("/gated/never/u2")
            let results = Collector<DownloadOutcome>()
            for url in [first, first, second, second] { downloader.download(url) { results.append($0) } }
            #expect(await server.waitUntil { $0.hits["/gated/never/u1"] == 1 && $0.hits["/gated/never/u2"] == 1 })
            downloader.cancel(url: first)
            #expect(await results.wait(for: 2).allSatisfy { $0.downloadReason?.isCancelled == true })
            #expect(await server.waitUntil { $0.aborted.contains("/gated/never/u1") })
            #expect(!server.snapshot.aborted.contains("/gated/never/u2"))
            downloader.cancelAll()
            #expect(await results.wait(for: 4).allSatisfy { $0.downloadReason?.isCancelled == true })
            #expect(await server.waitUntil { $0.aborted.contains("/gated/never/u2") })
        }
    }

    @Test("cancelling the Swift task cancels an async caller")
    func asyncCancellation() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/never/async")
            let task = Task { await outcome(downloader, url) }
            #expect(await server.waitUntil { $0.hits["/gated/never/async"] == 1 })
            task.cancel()
            let result = try await task.value("the cancelled download's outcome")
            #expect(result.downloadReason?.isCancelled == true)
            #expect(await server.waitUntil { $0.aborted.contains("/gated/never/async") })
        }
    }

    @Test("an already-cancelled Swift task fails at once and sends nothing")
    func alreadyCancelledTask() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/image/precancelled")
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await outcome(downloader, url)
            }
            #expect(await task.value.downloadReason?.isCancelled == true)
            #expect(server.hits("/image/precancelled") == 0)
        }
    }

    @Test("a cancelled queued task leaves the queue and is never sent")
    func cancelQueued() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader) { $0.maximumConcurrentDownloads = 1 }
            let blocker = Collector<DownloadOutcome>()
            let queued = Collector<DownloadOutcome>()
            downloader.download(server.url("/gated/q/blocker")) { blocker.append($0) }
            #expect(await server.waitUntil { $0.hits["/gated/q/blocker"] == 1 })
            let task = downloader.download(server.url("/image/queued")) { queued.append($0) }
            #expect(downloader.queuedCount == 1)
            task.cancel()
            #expect(await queued.wait(for: 1).first?.downloadReason?.isCancelled == true)
            #expect(downloader.queuedCount == 0)
            server.openGate("q")
            #expect(await blocker.wait(for: 1).first?.value != nil)
            #expect(server.hits("/image/queued") == 0)
        }
    }

    @Test("a finished task is forgotten: a later request downloads again")
    func finishedTaskRemoved() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/image/again")
            #expect(await outcome(downloader, url).value != nil)
            #expect(await outcome(downloader, url).value != nil)
            #expect(server.hits("/image/again") == 2)
            #expect(downloader.runningCount == 0)
        }
    }

    @Test("each caller gets its own callback queue and response data modifier")
    func perCallerDelivery() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/pc/x")
            let key = DispatchSpecificKey<String>()
            let queueA = DispatchQueue(label: "a")
            queueA.setSpecific(key: key, value: "a")
            let queueB = DispatchQueue(label: "b")
            queueB.setSpecific(key: key, value: "b")
            let results = Collector<(String, String?, DownloadOutcome)>()
            var optionsA = DownloadOptions(callbackQueue: .dispatch(queueA))
            optionsA.responseDataModifier = ResponseDataModifier { data, _ in data.prefix(10) }
            let optionsB = DownloadOptions(callbackQueue: .dispatch(queueB))
            var optionsC = DownloadOptions(callbackQueue: .dispatch(queueB))
            optionsC.responseDataModifier = ResponseDataModifier { _, _ in nil }
            downloader.download(url, options: optionsA) { results.append(("a", DispatchQueue.getSpecific(key: key), $0)) }
            downloader.download(url, options: optionsB) { results.append(("b", DispatchQueue.getSpecific(key: key), $0)) }
            downloader.download(url, options: optionsC) { results.append(("c", DispatchQueue.getSpecific(key: key), $0)) }
            server.openGate("pc")
            let outcomes = await results.wait(for: 3)
            let byName = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.0, ($0.1, $0.2)) })
            #expect(byName["a"]?.0 == "a")
            #expect(byName["a"]?.1.value?.data == server.image.prefix(10))
            #expect(byName["b"]?.0 == "b")
            #expect(byName["b"]?.1.value?.data == server.image)
            #expect(byName["c"]?.1.downloadReason == .dataModifyingFailed(url: url))
            #expect(server.hits("/gated/pc/x") == 1)
        }
    }

    @Test("progress reports received and expected bytes as they arrive")
    func progress() async throws {
        try await withLoopback { server, loader in
            let downloader = makeDownloader(loader)
            let url = server.url("/gated/pr/x")
            let reports = Collector<(Int, Int?)>()
            let results = Collector<DownloadOutcome>()
            downloader.download(
                url, options: DownloadOptions(callbackQueue: .immediate),
                progress: { reports.append(($0, $1)) }
            ) { results.append($0) }
            let first = try #require(await reports.wait(for: 1).first, "no progress report within the helper's time limit")
            #expect(first.0 < server.image.count)
            #expect(first.1 == server.image.count)
            server.openGate("pr")
            let outcome = await results.wait(for: 1)
            #expect(outcome.first?.value?.data == server.image, "the download itself: \(String(describing: outcome.first))")
            let last = reports.values.last
            #expect(last?.0 == server.image.count)
            #expect(last?.1 == server.image.count)
        }
    }
}
