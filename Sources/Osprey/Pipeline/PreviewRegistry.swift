import Synchronization

/// The progressive previewers of a pipeline, by the fetch work they watch: requests that ask for
/// previews attach to the previewer of their fetch key, and the download of that key feeds it, so
/// coalesced requests share one download's previews.
///
/// A previewer is made by whichever comes first, a listening request or the download, and is
/// forgotten when its download ends or when it has neither listeners nor a download. A download
/// that starts while no request anywhere listens costs one atomic load (``download(for:)``).
///
/// Lock order: the registry's lock, then a previewer's.
final class PreviewRegistry: Sendable {
    let previewers = Locked<[HashedKey<FetchJobKey>: ProgressivePreviewer]>([:])
    /// Listeners attached anywhere, read without the lock.
    let listeners = Atomic<Int>(0)

    /// A request's place among a previewer's listeners, to ``detach(_:)`` when it has its result.
    struct Attachment: Sendable {
        let key: HashedKey<FetchJobKey>
        let previewer: ProgressivePreviewer
        let id: Int
    }

    /// Attaches a listener to the previewer of `key`, made with `make` when there is none.
    func attach(
        _ key: HashedKey<FetchJobKey>, make: () -> ProgressivePreviewer,
        listener: (Int) -> ProgressivePreviewer.Listener
    ) -> Attachment? {
        previewers.withLock { previewers in
            if let existing = previewers[key], let id = existing.add(listener) {
                listeners.add(1, ordering: .relaxed)
                return Attachment(key: key, previewer: existing, id: id)
            }
            let previewer = make()
            guard let id = previewer.add(listener) else { return nil }
            previewers[key] = previewer
            listeners.add(1, ordering: .relaxed)
            return Attachment(key: key, previewer: previewer, id: id)
        }
    }

    /// Removes a listener; its previewer is forgotten when nothing else needs it.
    func detach(_ attachment: Attachment) {
        listeners.subtract(1, ordering: .relaxed)
        previewers.withLock { previewers in
            if attachment.previewer.remove(attachment.id), previewers[attachment.key] === attachment.previewer {
                previewers[attachment.key] = nil
            }
        }
    }

    /// The previewer a download of `key` feeds, if any request listens for its previews (and no
    /// other download feeds it).
    func download(for key: HashedKey<FetchJobKey>) -> ProgressivePreviewer? {
        guard listeners.load(ordering: .relaxed) > 0 else { return nil }
        return previewers.withLock { previewers in
            guard let previewer = previewers[key], previewer.startFeeding() else { return nil }
            return previewer
        }
    }

    /// The download feeding `previewer` ended: it makes no more previews and is forgotten.
    func downloadEnded(_ key: HashedKey<FetchJobKey>, _ previewer: ProgressivePreviewer) {
        previewer.end()
        previewers.withLock { previewers in
            if previewers[key] === previewer { previewers[key] = nil }
        }
    }
}
