import Dispatch
import Foundation
import Logging

/// Makes the progressive previews of one download (``ProgressiveJPEG``) for every request that
/// asked for them: the shared download's work, as its bytes are.
///
/// The downloader shows it the body after each chunk (``receive(_:expected:)``, on the
/// download's thread); a ``ProgressiveJPEGScanner`` finds the scan boundaries. When a scan has
/// completed since the last preview, no preview decode is running, and ``ProgressiveJPEG/interval``
/// has passed since the last one started (and, with ``ProgressiveJPEG/limitsDecodeCost``, the
/// bytes have doubled since the last preview and are no more than half the body),
/// the prefix up to the boundary is copied and decoded on the processing queue by the group's
/// ``ProgressiveJPEGDecoder`` (incremental with Osprey's decoder: each scan decoded once). Requests
/// with the same processors share the decode and the processing (the group's
/// ``Listener/processorIdentifier``); each group's previews are decoded with the plan its final
/// decode uses (``DecodePlan``), so they have the final image's size.
/// The download's end (``end()``) stops it: no decode starts after it, and a decode running then
/// delivers nothing, since the final image is on its way.
final class ProgressivePreviewer: Sendable {
    /// One request waiting for previews.
    struct Listener: Sendable {
        let id: Int
        /// Listeners with the same processors share a decode.
        let processorIdentifier: String
        /// The request's processor chain, split into its steps.
        let processors: [any ImageProcessing]
        /// The chain's first step folded into the decode, as for the final image.
        let plan: DecodePlan?
        /// Hands the preview (processed, not yet through the image modifier) to the request.
        let deliver: @Sendable (Image, PreviewInfo) -> Void
    }

    private struct State {
        var scanner = ProgressiveJPEGScanner()
        var listeners: [Listener] = []
        var nextID = 0
        /// A preview decode is running.
        var decoding = false
        /// When the last preview decode started.
        var lastStart: ContinuousClock.Instant?
        /// The boundary the last preview was decoded from.
        var previewedBoundary = 0
        var previews = 0
        /// A download is showing this previewer its body.
        var feeding = false
        /// That download has ended: no more previews.
        var ended = false
        /// The preview decoder of each group of listeners (by processor identifier).
        var decoders: [String: ProgressiveJPEGDecoder] = [:]
    }

    private let state = Locked(State())
    private let interval: Duration
    private let limitsDecodeCost: Bool
    private let decoder: any ImageDecoding
    private let decoding: DecodingOptions
    private let queue: ProcessingPlace
    private let logger: Logger
    private let key: String
    private static let clock = ContinuousClock()

    init(settings: ProgressiveJPEG, decoder: any ImageDecoding, decoding: DecodingOptions, queue: ProcessingPlace, logger: Logger, key: String) {
        interval = .milliseconds(Int64((max(0, settings.interval) * 1000).rounded()))
        limitsDecodeCost = settings.limitsDecodeCost
        self.decoder = decoder
        self.decoding = decoding
        self.queue = queue
        self.logger = logger
        self.key = key
    }

    // MARK: - Listeners

    /// Adds a listener made by `make` with a fresh id; `nil` once the download has ended.
    func add(_ make: (Int) -> Listener) -> Int? {
        state.withLock { state in
            guard !state.ended else { return nil }
            state.nextID += 1
            state.listeners.append(make(state.nextID))
            return state.nextID
        }
    }

    /// Removes listener `id` (its request has its result, or was cancelled). Returns whether the
    /// previewer is now idle: no listener and no download.
    func remove(_ id: Int) -> Bool {
        state.withLock { state in
            state.listeners.removeAll { $0.id == id }
            return state.listeners.isEmpty && !state.feeding
        }
    }

    /// Marks a download as feeding this previewer. `false` when one already does or did.
    func startFeeding() -> Bool {
        state.withLock { state in
            guard !state.feeding, !state.ended else { return false }
            state.feeding = true
            return true
        }
    }

    // MARK: - Bytes

    /// Looks at the body so far (after each chunk, on the download's thread) and starts a
    /// preview decode when one is due. Does not keep `body`: only a prefix is copied, when a
    /// decode starts.
    func receive(_ body: Data, expected: Int?) {
        let start = state.withLock {
            state -> (boundary: Int, scans: Int, index: Int, listeners: [Listener], decoders: [String: ProgressiveJPEGDecoder])? in
            guard !state.ended, !state.listeners.isEmpty, state.scanner.verdict != .notProgressive else { return nil }
            body.withUnsafeBytes { _ = state.scanner.scan($0) }
            let boundary = state.scanner.boundary
            guard boundary > state.previewedBoundary, !state.decoding else { return nil }
            // The whole body is here: the final decode comes next, a preview would only delay it.
            if state.scanner.reachedEnd || (expected.map { body.count >= $0 } ?? false) { return nil }
            if limitsDecodeCost {
                // ProgressiveJPEG.limitsDecodeCost: a few output passes, over the first half of the scans' decoding.
                guard boundary >= 2 * state.previewedBoundary else { return nil }
                if let expected, 2 * (boundary + 2) > expected {
                    // No preview can come any more: the decoders' coefficients go now, not at the end.
                    state.decoders.removeAll()
                    return nil
                }
            }
            let now = Self.clock.now
            if let last = state.lastStart, now - last < interval { return nil }
            state.decoding = true
            state.lastStart = now
            state.previewedBoundary = boundary
            state.previews += 1
            for listener in state.listeners where state.decoders[listener.processorIdentifier] == nil {
                state.decoders[listener.processorIdentifier] = ProgressiveJPEGDecoder(
                    decoder: decoder, options: decoding, plan: listener.plan)
            }
            return (boundary, state.scanner.completedScans, state.previews, state.listeners, state.decoders)
        }
        guard let start else { return }
        // The scans and the marker after the last one: libjpeg ends a scan when it sees that marker.
        let prefix = Data(body.prefix(min(body.count, start.boundary + 2)))
        let info = PreviewInfo(receivedBytes: body.count, expectedBytes: expected, scans: start.scans, index: start.index)
        let listeners = start.listeners
        let decoders = start.decoders
        let scansEnd = start.boundary
        ProcessingThread.run(on: queue) { [self] in
            let previews = render(prefix, scansEnd: scansEnd, info: info, for: listeners, decoders: decoders)
            // The next decode may start once this one is done, before the delivery: a chunk
            // that arrives while the previews are handed out is not skipped.
            let waiting = state.withLock { state -> Set<Int> in
                state.decoding = false
                return state.ended ? [] : Set(state.listeners.map(\.id))
            }
            for (listener, image) in previews where waiting.contains(listener.id) { listener.deliver(image, info) }
        }
    }

    /// The download ended (with the final bytes, or a failure): no more previews, and none
    /// still decoding is delivered.
    func end() {
        state.withLock { state in
            state.ended = true
            state.feeding = false
            state.listeners.removeAll()
            state.decoders.removeAll()
        }
    }

    private var hasEnded: Bool { state.withLock { $0.ended } }

    // MARK: - Decoding

    /// Decodes `prefix` once per group of listeners with the same processors and runs the group's
    /// processors: the preview of each listener (none once the download has ended).
    private func render(
        _ prefix: Data, scansEnd: Int, info: PreviewInfo, for listeners: [Listener], decoders: [String: ProgressiveJPEGDecoder]
    ) -> [(Listener, Image)] {
        var groups: [String: [Listener]] = [:]
        var order: [String] = []
        for listener in listeners {
            if groups[listener.processorIdentifier] == nil { order.append(listener.processorIdentifier) }
            groups[listener.processorIdentifier, default: []].append(listener)
        }
        var previews: [(Listener, Image)] = []
        for identifier in order {
            guard !hasEnded, let group = groups[identifier], let first = group.first, let previewDecoder = decoders[identifier] else {
                return []
            }
            do throws(OspreyError) {
                guard let (decoded, folded) = try previewDecoder.preview(of: prefix, scansEnd: scansEnd) else { continue }
                let image = try ImageProcessors.Composition(Array(first.processors.dropFirst(folded ? 1 : 0))).process(decoded)
                logger.debug(
                    "preview",
                    metadata: [
                        "osprey.key": "\(key)", "osprey.bytes": "\(info.receivedBytes)", "osprey.scans": "\(info.scans)",
                        "osprey.size": "\(image.width)x\(image.height)"
                    ])
                previews += group.map { ($0, image) }
            } catch {
                // A preview that fails is no reason to fail the request: the final decode decides.
                logger.debug("preview failed", metadata: ["osprey.key": "\(key)", "osprey.error": "\(error)"])
            }
        }
        return previews
    }
}
