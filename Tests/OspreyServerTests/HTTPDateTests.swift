import Foundation
import Osprey
import Testing

@testable import OspreyServer

@Suite("HTTP dates: IMF-fixdate, one shared formatter, formatted once per result", .timeLimit(.minutes(1)))
struct HTTPDateTests {
    @Test("IMF-fixdate in GMT, whatever the thread")
    func format() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(HTTPDate.format(date) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        // The formatter is shared by every request: concurrent use gives the same answers.
        let answers = Locked<Set<String>>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<200 { answers.withLock { _ = $0.insert(HTTPDate.format(date)) } }
        }
        #expect(answers.withLock { $0 } == ["Tue, 14 Nov 2023 22:13:20 GMT"])
    }

    @Test("a result's Last-Modified is its creation time, to the second")
    func entry() {
        let entry = ResultCache.Entry(data: Data([1, 2, 3]), format: .jpeg, created: Date(timeIntervalSince1970: 1_700_000_000.75))
        #expect(entry.created == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(entry.lastModified == "Tue, 14 Nov 2023 22:13:20 GMT")
    }
}
