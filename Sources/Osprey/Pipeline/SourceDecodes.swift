/// The decodes of one fetched source, shared by every request that fetched it: each decode size
/// (a ``DecodePlan``, or `nil` for the full decode) runs once, however late a request asks for it.
///
/// The fetch stage hands one instance to all its subscribers with the bytes. A shared job would
/// not do here: its subscribers arrive one by one as the fetch stage calls them, and a decode
/// that finished before the last of them came would start again for it.
final class SourceDecodes: Sendable {
    typealias Completion = @Sendable (Result<ProcessedImage, OspreyError>) -> Void

    private enum Entry: Sendable {
        /// Running; these wait for it.
        case running([Completion])
        case done(Result<ProcessedImage, OspreyError>)
    }

    private let entries = Locked<[DecodePlan?: Entry]>([:])

    /// Calls `completion` with the decode for `plan`. The first caller for a plan runs `decode`
    /// (which must call its argument once); the others wait for it or get its result at once.
    func result(for plan: DecodePlan?, decode: (@escaping Completion) -> Void, completion: @escaping Completion) {
        let done: Result<ProcessedImage, OspreyError>?? = entries.withLock { entries in
            switch entries[plan] {
            case .done(let result):
                return .some(result)
            case .running(var waiters):
                waiters.append(completion)
                entries[plan] = .running(waiters)
                return .some(nil)
            case nil:
                entries[plan] = .running([completion])
                return nil
            }
        }
        switch done {
        case .some(.some(let result)): completion(result)
        case .some(.none): break
        case .none: decode { result in self.finish(plan, result) }
        }
    }

    private func finish(_ plan: DecodePlan?, _ result: Result<ProcessedImage, OspreyError>) {
        let waiters: [Completion] = entries.withLock { entries in
            guard case .running(let waiters) = entries[plan] else { return [] }
            entries[plan] = .done(result)
            return waiters
        }
        for waiter in waiters { waiter(result) }
    }
}
