/// Polls `condition` until it holds: for a state another task or thread reaches without telling.
/// Throws ``DeadlineExceeded`` naming `what` when it does not hold within `limit` (default 60
/// seconds), so a broken test fails instead of spinning forever. Yields between the first looks,
/// then sleeps a millisecond between looks.
public func eventually(_ what: @autoclosure () -> String, within limit: Duration = .seconds(60), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    var looks = 0
    while !condition() {
        guard ContinuousClock.now < deadline else { throw DeadlineExceeded(what: what(), limit: limit) }
        looks += 1
        if looks < 100 { await Task.yield() } else { try await Task.sleep(for: .milliseconds(1)) }
    }
}
