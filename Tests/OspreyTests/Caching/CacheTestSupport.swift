import Foundation
import OspreyTestSupport
import Synchronization

@testable import Osprey

/// A clock tests move by hand, so that no test sleeps.
final class TestClock: Sendable {
    private let current: Locked<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = Locked(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 += seconds }
    }

    var function: @Sendable () -> Date { { self.now } }
}

/// A fresh directory under the temporary directory, removed by `remove()`.
struct TemporaryDirectory: ~Copyable {
    let url: URL
    var path: String { url.path }

    init(_ label: String = "cache") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("osprey-tests-\(label)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Restore permissions a test may have taken away, then remove everything.
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        if let names = try? FileManager.default.subpathsOfDirectory(atPath: url.path) {
            for name in names {
                _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.appendingPathComponent(name).path)
            }
        }
        try? FileManager.default.removeItem(at: url)
    }
}

/// The repository's test images, through ``FixtureImages``.
enum TestImages {
    /// ``FixtureImages/directory``: `$OSPREY_TESTDATA`, else `Tests/Fixtures/images`.
    static var directory: URL { FixtureImages.directory }

    static func data(_ name: String) throws -> Data { try FixtureImages.data(name) }
}

/// Deterministic bytes for an entry, so that a torn or mixed-up entry is recognisable.
func entryBytes(_ key: String, size: Int) -> Data {
    var data = Data(capacity: size)
    let seed = Array(key.utf8)
    var i = 0
    while data.count < size {
        data.append(seed.isEmpty ? UInt8(truncatingIfNeeded: i) : seed[i % seed.count] &+ UInt8(truncatingIfNeeded: i / seed.count))
        i += 1
    }
    return data
}
