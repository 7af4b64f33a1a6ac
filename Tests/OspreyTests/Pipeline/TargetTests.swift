import Foundation
import Testing

@testable import Osprey

@Suite("Targets", .timeLimit(.minutes(5)))
struct TargetTests {
    @Test("a target reused for many URLs shows only the last; earlier results report notCurrentSourceTask")
    func reuseShowsLast() async throws {
        try await PipelineFixture.run { f in
            let target = TestTarget()
            let results = Collector<(Int, Result<ImageResult, OspreyError>)>()
            let count = 20
            for index in 0..<count {
                // Each URL gets a distinct size, so the image on the target names its request.
                target.osprey.setImage(
                    with: f.source("/image/reuse/\(index)"),
                    options: [.processor(ImageProcessors.Resize(width: 10 + index, height: 10 + index, contentMode: .stretch))],
                    pipeline: f.pipeline, completion: { results.append((index, $0)) })
            }
            let values = await results.wait(for: count)
            #expect(target.image?.width == 10 + count - 1)
            for (index, result) in values where index != count - 1 {
                guard case .failure(.pipeline(.notCurrentSourceTask)) = result else {
                    Issue.record("request \(index) finished with \(result)")
                    continue
                }
            }
            let last = values.first { $0.0 == count - 1 }
            #expect((try? last?.1.get())?.image.width == 10 + count - 1)
            // No stale image was ever applied after the last one.
            #expect(target.history.last??.width == 10 + count - 1)
            #expect(
                !f.pipeline.cachedType(
                    for: f.source("/image/reuse/\(count - 1)"),
                    options: [.processor(ImageProcessors.Resize(width: 10 + count - 1, height: 10 + count - 1, contentMode: .stretch))]
                ).cached == false)
        }
    }

    @Test("placeholder at once, failure image on failure, indicator started and stopped")
    func placeholderFailureIndicator() async throws {
        try await PipelineFixture.run { f in
            let placeholder = try Image(rgba: [UInt8](repeating: 200, count: 4 * 4 * 4), width: 4, height: 4)
            let failure = try Image(rgba: [UInt8](repeating: 10, count: 2 * 2 * 4), width: 2, height: 2)
            let target = TestTarget()
            let indicator = TestIndicator()
            let done = Collector<Result<ImageResult, OspreyError>>()
            target.osprey.setImage(
                with: f.source("/gated/placeholder/x"), placeholder: placeholder,
                settings: TargetLoadSettings(failureImage: failure, indicator: indicator), pipeline: f.pipeline, completion: { done.append($0) })
            #expect(target.image?.width == 4, "the placeholder is set before setImage returns")
            #expect(indicator.starts == 1)
            #expect(target.osprey.isLoading())
            f.server.openGate("placeholder")
            _ = await done.wait(for: 1)
            #expect(target.image?.width == 128)
            #expect(indicator.stops == 1)
            #expect(!target.osprey.isLoading())

            target.osprey.setImage(
                with: f.source("/status/404"), placeholder: placeholder,
                settings: TargetLoadSettings(failureImage: failure), pipeline: f.pipeline, completion: { done.append($0) })
            let outcomes = await done.wait(for: 2)
            guard case .failure(.download(.invalidStatusCode(404, _))) = outcomes[1] else {
                Issue.record("\(outcomes[1])")
                return
            }
            #expect(target.image?.width == 2)
        }
    }

    @Test("keep-current-image skips the placeholder; a nil source sets it and fails with emptySource")
    func keepCurrentAndNilSource() async throws {
        try await PipelineFixture.run { f in
            let placeholder = try Image(rgba: [UInt8](repeating: 1, count: 4), width: 1, height: 1)
            let target = TestTarget()
            let done = Collector<Result<ImageResult, OspreyError>>()
            target.osprey.setImage(with: f.source("/image/keep"), pipeline: f.pipeline, completion: { done.append($0) })
            _ = await done.wait(for: 1)
            target.osprey.setImage(
                with: f.source("/gated/keep/x"), placeholder: placeholder,
                settings: TargetLoadSettings(keepCurrentImageWhileLoading: true), pipeline: f.pipeline, completion: { done.append($0) })
            #expect(target.image?.width == 128, "the current image stays while loading")
            target.osprey.setImage(with: nil, placeholder: placeholder, pipeline: f.pipeline, completion: { done.append($0) })
            let values = await done.wait(for: 3)
            #expect(target.image?.width == 1)
            #expect(values.contains { if case .failure(.pipeline(.emptySource)) = $0 { true } else { false } })
            #expect(
                values.contains { if case .failure(.pipeline(.notCurrentSourceTask)) = $0 { true } else { false } },
                "the gated load was cancelled by the nil source")
            f.server.openGate("keep")
        }
    }

    @Test("transitions run for non-memory results; operation keys are independent; cancelDownloadTask stops a load")
    func transitionsAndKeys() async throws {
        try await PipelineFixture.run { f in
            let target = TestTarget()
            let transitions = Collector<Int>()
            let transition = ImageTransition { target, image in
                transitions.append(image.width)
                target.image = image
            }
            let done = Collector<String>()
            target.osprey.setImage(
                with: f.source("/image/transition"), settings: TargetLoadSettings(transition: transition),
                pipeline: f.pipeline, completion: { _ in done.append("first") })
            _ = await done.wait(for: 1)
            #expect(transitions.values == [128])
            target.osprey.setImage(
                with: f.source("/image/transition"), settings: TargetLoadSettings(transition: transition),
                pipeline: f.pipeline, completion: { _ in done.append("memory") })
            _ = await done.wait(for: 2)
            #expect(transitions.values == [128], "a memory hit is set without the transition")
            // Two operation keys load side by side; cancelling one leaves the other.
            let banner = TargetLoadSettings(operationKey: "banner")
            target.osprey.setImage(
                with: f.source("/gated/keys/a"), pipeline: f.pipeline,
                completion: { result in
                    done.append((try? result.get()) == nil ? "image-failed" : "image")
                })
            target.osprey.setImage(
                with: f.source("/image/keys-b"), settings: banner, pipeline: f.pipeline,
                completion: { result in
                    done.append((try? result.get()) == nil ? "banner-failed" : "banner")
                })
            target.osprey.cancelDownloadTask()
            let values = await done.wait(for: 4)
            #expect(values.contains("banner"))
            #expect(values.contains("image-failed"))
            f.server.openGate("keys")
        }
    }

    @Test("targets are held weakly: a released target's load ends without keeping it alive")
    func targetsReleased() async throws {
        try await PipelineFixture.run { f in
            weak var weakTarget: TestTarget?
            let done = Collector<Result<ImageResult, OspreyError>>()
            var identity: ObjectIdentifier?
            do {
                let target = TestTarget()
                weakTarget = target
                identity = ObjectIdentifier(target)
                target.osprey.setImage(with: f.source("/gated/weak/x"), pipeline: f.pipeline, completion: { done.append($0) })
            }
            #expect(weakTarget == nil, "Osprey does not retain the target")
            f.server.openGate("weak")
            let values = await done.wait(for: 1)
            guard case .failure(.pipeline(.notCurrentSourceTask)) = values[0] else {
                Issue.record("\(values[0])")
                return
            }
            let released = try #require(identity)
            #expect(TargetRegistry.shared.hasReleasedEntry(released) == false, "the released target's entry is dropped when its load ends")
        }
    }

    @Test("a setter or a transition that calls back into Osprey (another target, or its own) does not deadlock")
    func callbacksCallBackIn() async throws {
        try await PipelineFixture.run { f in
            let resize: @Sendable (Int) -> [OspreyOption] = { width in
                [.processor(ImageProcessors.Resize(width: width, height: width, contentMode: .stretch))]
            }
            let placeholder = try Image(rgba: [UInt8](repeating: 9, count: 4), width: 1, height: 1)
            let other = TestTarget()
            let done = Collector<String>()
            // Its setter starts a load of another target, once (from the placeholder set by begin).
            let calling = CallingTarget { _ in
                other.osprey.setImage(
                    with: f.source("/image/callback/other"), options: resize(20), pipeline: f.pipeline,
                    completion: { _ in done.append("other") })
            }
            // Its transition sets the same target again, once, through Osprey.
            let again = TestTarget()
            let transition = ImageTransition { target, image in
                target.image = image
                guard image.width == 30 else { return }
                again.osprey.setImage(
                    with: f.source("/image/callback/again"), options: resize(40), pipeline: f.pipeline,
                    completion: { _ in done.append("again second") })
            }
            // Off the test's task: a deadlock fails the wait below instead of hanging the test.
            DispatchQueue.global().async {
                calling.osprey.setImage(
                    with: f.source("/image/callback/calling"), placeholder: placeholder, options: resize(10),
                    pipeline: f.pipeline, completion: { _ in done.append("calling") })
                again.osprey.setImage(
                    with: f.source("/image/callback/again-first"), options: resize(30),
                    settings: TargetLoadSettings(transition: transition), pipeline: f.pipeline,
                    completion: { _ in done.append("again first") })
            }
            let values = await done.wait(for: 4)
            #expect(Set(values) == ["other", "calling", "again first", "again second"])
            #expect(other.image?.width == 20)
            #expect(calling.image?.width == 10)
            #expect(again.image?.width == 40, "the load started from the transition is applied after it")
        }
    }
}

/// A target whose setter calls `onSet` once, after storing the image.
private final class CallingTarget: ImageTarget {
    private let state = Locked<(image: Image?, called: Bool)>((nil, false))
    private let onSet: @Sendable (Image?) -> Void
    init(onSet: @escaping @Sendable (Image?) -> Void) { self.onSet = onSet }
    var image: Image? {
        get { state.withLock { $0.image } }
        set {
            let first = state.withLock { state in
                state.image = newValue
                defer { state.called = true }
                return !state.called
            }
            if first { onSet(newValue) }
        }
    }
}

extension TargetRegistry {
    /// Whether an entry for `id` outlived its target (released targets leave none).
    func hasReleasedEntry(_ id: ObjectIdentifier) -> Bool {
        state.withLock { state in state.entries[id].map { $0.target == nil } ?? false }
    }
}
