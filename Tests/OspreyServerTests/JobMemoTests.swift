import Foundation
import Osprey
import Synchronization
import Testing

@testable import OspreyServer

/// A clock tests move by hand (imgproxy `exp`).
final class MemoTestClock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date) { time = Mutex(start) }
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

@Suite("Job memo: a repeated path skips its parse, never its verdict", .timeLimit(.minutes(3)))
struct JobMemoTests {
    static let thumborKey = "memo-key"
    static let rest = "120x80/smart/http://example.com/a.jpg"

    static func resolver(memo: JobMemo = JobMemo(), clock: MemoTestClock? = nil, allowedSources: [String] = []) -> JobResolver {
        var imgproxy = ImgproxyURLParser(allowUnsigned: true)
        if let clock { imgproxy.now = { clock.now } }
        return JobResolver(
            thumbor: ThumborURLParser(signer: ThumborSigner(key: thumborKey)), imgproxy: imgproxy,
            configuration: ServerConfiguration(), sourceGuard: SourceGuard(allowedSources: allowedSources), memo: memo)
    }

    static func signed(_ rest: String, key: String = thumborKey) -> String {
        "/" + ThumborSigner(key: key).signature(of: rest) + "/" + rest
    }

    @Test("a verified path is kept and its repeats answer the same job")
    func repeats() throws {
        let memo = JobMemo()
        let jobs = Self.resolver(memo: memo)
        let path = Self.signed(Self.rest)
        let first = try jobs.job(path: path, query: nil)
        #expect(memo.count == 1)
        #expect(memo.job(for: JobMemo.key(path: path, query: nil), now: { Date() }) != nil)
        let again = try jobs.job(path: path, query: nil)
        #expect(again.identity == first.identity)
        #expect(again.job.source.absoluteString == "http://example.com/a.jpg")
        #expect(memo.count == 1)
    }

    @Test("tampered paths, other keys' signatures and unsafe URLs stay 403 next to a kept path")
    func refusals() throws {
        let memo = JobMemo()
        let jobs = Self.resolver(memo: memo)
        _ = try jobs.job(path: Self.signed(Self.rest), query: nil)
        let signature = ThumborSigner(key: Self.thumborKey).signature(of: Self.rest)
        let refused = [
            "/" + signature + "/" + Self.rest.replacingOccurrences(of: "120x80", with: "121x80"),
            Self.signed(Self.rest, key: "other"),
            "/unsafe/" + Self.rest
        ]
        for path in refused {
            for _ in 0..<2 {
                do {
                    _ = try jobs.job(path: path, query: nil)
                    Issue.record("\(path) was served")
                } catch {
                    #expect(error.status == 403, "\(path)")
                }
            }
        }
        #expect(memo.count == 1)
    }

    @Test("the query is part of the key: the same path with a query is its own job")
    func query() throws {
        let jobs = Self.resolver()
        let path = Self.signed(Self.rest)
        let plain = try jobs.job(path: path, query: nil)
        let queried = try jobs.job(path: path, query: "v=2")
        #expect(plain.job.source.absoluteString == "http://example.com/a.jpg")
        #expect(queried.job.source.absoluteString == "http://example.com/a.jpg?v=2")
        #expect(try jobs.job(path: path, query: nil).identity == plain.identity)
    }

    @Test("an imgproxy URL with exp is refused (404) once its time has passed, kept or not")
    func expiry() throws {
        let start = Date(timeIntervalSince1970: 2_000_000_000)
        let clock = MemoTestClock(start)
        let jobs = Self.resolver(clock: clock)
        let path = "/imgproxy/_/exp:\(Int(start.timeIntervalSince1970) + 60)/w:10/plain/http://example.com/a.jpg"
        _ = try jobs.job(path: path, query: nil)
        _ = try jobs.job(path: path, query: nil)
        clock.advance(120)
        for _ in 0..<2 {
            do {
                _ = try jobs.job(path: path, query: nil)
                Issue.record("expired URL was served")
            } catch {
                #expect(error.status == 404)
            }
        }
    }

    @Test("sources outside the allow-list are 403 every time and never kept")
    func allowList() throws {
        let memo = JobMemo()
        let jobs = Self.resolver(memo: memo, allowedSources: ["example.com"])
        let outside = Self.signed("http://other.com/a.jpg")
        for _ in 0..<2 {
            do {
                _ = try jobs.job(path: outside, query: nil)
                Issue.record("outside source was served")
            } catch {
                #expect(error.status == 403)
            }
        }
        #expect(memo.count == 0)
        _ = try jobs.job(path: Self.signed(Self.rest), query: nil)
        #expect(memo.count == 1)
    }

    @Test("bounded: at most its capacity, recently used paths stay, long paths are not kept")
    func bounded() throws {
        let memo = JobMemo(capacity: 8)
        let jobs = Self.resolver(memo: memo)
        let hot = Self.signed(Self.rest)
        for index in 0..<100 {
            _ = try jobs.job(path: Self.signed("\(index)x0/http://example.com/\(index).jpg"), query: nil)
            _ = try jobs.job(path: hot, query: nil)
            #expect(memo.count <= 8)
        }
        #expect(memo.job(for: hot, now: { Date() }) != nil)
        #expect(memo.job(for: Self.signed("99x0/http://example.com/99.jpg"), now: { Date() }) != nil)
        #expect(memo.job(for: Self.signed("0x0/http://example.com/0.jpg"), now: { Date() }) == nil)
        let long = Self.signed("10x0/http://example.com/" + String(repeating: "a", count: JobMemo.longestPath) + ".jpg")
        _ = try jobs.job(path: long, query: nil)
        #expect(memo.job(for: long, now: { Date() }) == nil)
    }

    @Test("concurrent requests over a small memo each get their own path's job")
    func concurrent() async throws {
        let jobs = Self.resolver(memo: JobMemo(capacity: 4))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<200 {
                        let index = (task * 7 + round) % 12
                        let job = try jobs.job(path: Self.signed("\(index + 1)x0/http://example.com/\(index).jpg"), query: nil)
                        #expect(job.job.source.absoluteString == "http://example.com/\(index).jpg")
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test("result keys keep their form: source|processing|format:quality|maxBytes")
    func resultKeys() throws {
        let job = try Self.resolver().job(path: "/imgproxy/_/w:10/q:70/f:png/plain/http://example.com/a.jpg", query: nil)
        let processing = job.job.processingIdentifier
        var asked = false
        let fixed = job.resultKey(quality: 70) {
            asked = true
            return FormatNegotiator.Offer(formats: [])
        }
        #expect(fixed == "http://example.com/a.jpg|\(processing)|png:70|0")
        #expect(!asked, "the offer is parsed only for a negotiated format")
        let negotiated = try Self.resolver().job(path: "/imgproxy/_/w:10/plain/http://example.com/a.jpg", query: nil)
        let auto = negotiated.resultKey(quality: 80) { FormatNegotiator.Offer(formats: [.webp]) }
        #expect(auto == "http://example.com/a.jpg|\(negotiated.job.processingIdentifier)|auto:webp:80|0")
    }
}
