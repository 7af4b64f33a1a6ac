import Foundation
import OspreyTestSupport

extension LoopbackOrigin {
    /// The one origin on the fixtures' fixed port (signatures cover the image URL, port included),
    /// shared by every test that uses the committed client URLs and never stopped, so that suites
    /// running at the same time do not compete for the port. It serves `/photo.jpg`.
    static func fixtureOrigin(port: Int) async throws -> LoopbackOrigin {
        try await FixtureOriginBox.shared.origin(port: port)
    }
}

/// Starts the fixture origin once. The start is a task every caller awaits: the actor is
/// reentrant across the await, so a stored origin alone let two suites both start one.
actor FixtureOriginBox {
    static let shared = FixtureOriginBox()
    private var starting: Task<LoopbackOrigin, any Error>?

    func origin(port: Int) async throws -> LoopbackOrigin {
        let task =
            starting
            ?? Task {
                let origin = try await LoopbackOrigin.start(port: port)
                origin.set("/photo.jpg", body: TestImages.photo)
                return origin
            }
        starting = task
        return try await task.value
    }
}

/// A test's set-up failed (a server did not start, a helper script failed).
struct OriginError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
