import Foundation
import Testing

@testable import Osprey

@Suite("Targets", .timeLimit(.minutes(5)))
struct TargetTests {
    @Test("a memory hit is displayed before setImage returns, with no placeholder first; a miss shows the placeholder, then the image")
    func memoryHitIsSynchronous() async throws {
        try await PipelineFixture.run { f in try await Self.memoryHitIsSynchronous(f) }
    }

    @MainActor
    private static func memoryHitIsSynchronous(_ f: PipelineFixture) async throws {
        do {
            let placeholder = try Image(rgba: [UInt8](repeating: 7, count: 4), width: 1, height: 1)
            let widget = TestWidget()
            let done = Collector<Bool>()
            widget.osprey.setImage(
                with: f.source("/image/hit"), placeholder: placeholder, pipeline: f.pipeline, completion: { done.append((try? $0.get()) != nil) })
            #expect(widget.shown.map { $0?.width } == [1], "a miss shows the placeholder at once")
            #expect(await done.wait(for: 1) == [true])
            #expect(widget.shown.last??.width == 128)
            let other = TestWidget()
            let inline = Collector<Bool>()
            other.osprey.setImage(
                with: f.source("/image/hit"), placeholder: placeholder, pipeline: f.pipeline, completion: { _ in inline.append(true) })
            #expect(other.shown.map { $0?.width } == [128], "the hit is shown in the same turn, with no placeholder")
            #expect(inline.values == [true], "the completion ran before setImage returned")
            #expect(!other.osprey.isLoading)
        }
    }

    @Test("a reused widget shows only its last request; earlier ones report notCurrentSourceTask and never display")
    func reuseShowsLast() async throws {
        try await PipelineFixture.run { f in try await Self.reuseShowsLast(f) }
    }

    @MainActor
    private static func reuseShowsLast(_ f: PipelineFixture) async throws {
        do {
            let widget = TestWidget()
            let results = Collector<(Int, Bool)>()
            let count = 20
            for index in 0..<count {
                widget.osprey.setImage(
                    with: f.source("/image/reuse-main/\(index)"),
                    options: [.processor(ImageProcessors.Resize(width: 10 + index, height: 10 + index, contentMode: .stretch))],
                    settings: TargetSettings(sizedToTarget: false), pipeline: f.pipeline,
                    completion: { result in
                        if case .failure(.pipeline(.notCurrentSourceTask)) = result {
                            results.append((index, false))
                        } else {
                            results.append((index, true))
                        }
                    })
            }
            let values = await results.wait(for: count)
            #expect(values.filter(\.1).map(\.0) == [count - 1])
            #expect(widget.shown.compactMap { $0 }.map(\.width) == [10 + count - 1], "no earlier image was ever displayed")
        }
    }

    @Test("failure image on failure, indicator started and stopped, sized to the widget by default")
    func failureIndicatorSizing() async throws {
        try await PipelineFixture.run { f in try await Self.failureIndicatorSizing(f) }
    }

    @MainActor
    private static func failureIndicatorSizing(_ f: PipelineFixture) async throws {
        do {
            let failure = try Image(rgba: [UInt8](repeating: 10, count: 2 * 2 * 4), width: 2, height: 2)
            let widget = TestWidget()
            widget.pixelSize = (32, 32)
            let indicator = TestIndicator()
            let done = Collector<Bool>()
            let settings = TargetSettings<TestWidget>(failureImage: failure, indicator: { _ in indicator })
            widget.osprey.setImage(
                with: f.source("/image/sized"), settings: settings, pipeline: f.pipeline, completion: { done.append((try? $0.get()) != nil) })
            #expect(indicator.starts == 1)
            _ = await done.wait(for: 1)
            #expect(indicator.stops == 1)
            #expect(widget.shown.last??.width == 32, "decoded to fit the widget's 32x32 pixels")
            widget.osprey.setImage(
                with: f.source("/status/404"), settings: settings, pipeline: f.pipeline, completion: { done.append((try? $0.get()) != nil) })
            #expect(await done.wait(for: 2) == [true, false])
            #expect(widget.shown.last??.width == 2, "the failure image is shown")
            #expect(indicator.stops == 2)
        }
    }

    @Test("releasing the widget cancels its load; cancelDownloadTask does too and nothing is shown")
    func releaseCancels() async throws {
        try await PipelineFixture.run { f in try await Self.releaseCancels(f) }
    }

    @MainActor
    private static func releaseCancels(_ f: PipelineFixture) async throws {
        do {
            var widget: TestWidget? = TestWidget()
            let task = try #require(widget?.osprey.setImage(with: f.source("/gated/release-main/x"), pipeline: f.pipeline))
            #expect(!task.isCancelled)
            widget = nil
            #expect(task.isCancelled, "the controller's deinit cancelled the load")
            let kept = TestWidget()
            let done = Collector<Bool>()
            let started = kept.osprey.setImage(
                with: f.source("/gated/release-main/y"), settings: TargetSettings(finishesDownloadOnCancel: false), pipeline: f.pipeline,
                completion: { done.append((try? $0.get()) != nil) })
            let second = try #require(started)
            kept.osprey.cancelDownloadTask()
            #expect(second.isCancelled)
            f.server.openGate("release-main")
            #expect(await done.wait(for: 1) == [false])
            #expect(kept.shown.compactMap { $0 }.isEmpty)
        }
    }
}

extension TargetTests {
    @Test("keep-current-image skips the placeholder; a nil URL shows it and fails with emptySource, ending the running load")
    func keepCurrentAndNilSource() async throws {
        try await PipelineFixture.run { f in try await Self.keepCurrentAndNilSource(f) }
    }

    @MainActor
    private static func keepCurrentAndNilSource(_ f: PipelineFixture) async throws {
        do {
            let placeholder = try Image(rgba: [UInt8](repeating: 1, count: 4), width: 1, height: 1)
            let widget = TestWidget()
            let done = Collector<Result<ImageResult, OspreyError>>()
            widget.osprey.setImage(with: f.server.url("/image/keep"), pipeline: f.pipeline, completion: { done.append($0) })
            _ = await done.wait(for: 1)
            let shownBefore = widget.shown.count
            widget.osprey.setImage(
                with: f.source("/gated/keep/x"), placeholder: placeholder,
                settings: TargetSettings(keepCurrentImageWhileLoading: true), pipeline: f.pipeline, completion: { done.append($0) })
            #expect(widget.shown.count == shownBefore && widget.shown.last??.width == 128, "the current image stays while loading")
            widget.osprey.setImage(with: nil as URL?, placeholder: placeholder, pipeline: f.pipeline, completion: { done.append($0) })
            let values = await done.wait(for: 3)
            #expect(widget.shown.last??.width == 1, "the placeholder is shown")
            #expect(values.contains { if case .failure(.pipeline(.emptySource)) = $0 { true } else { false } })
            #expect(
                values.contains { if case .failure(.pipeline(.notCurrentSourceTask)) = $0 { true } else { false } },
                "the gated load was ended by the nil URL")
            f.server.openGate("keep")
        }
    }

    @Test("a transition runs for images not from the memory cache, and for memory hits only when forced")
    func transitions() async throws {
        try await PipelineFixture.run { f in try await Self.transitions(f) }
    }

    @MainActor
    private static func transitions(_ f: PipelineFixture) async throws {
        do {
            let widget = TestWidget()
            let applied = Collector<Int>()
            let plain = ImageTransition<TestWidget> { widget, content in
                applied.append(content.width)
                widget.display(content)
            }
            let done = Collector<Bool>()
            let settings = TargetSettings(transition: plain, sizedToTarget: false)
            widget.osprey.setImage(
                with: f.source("/image/transition"), settings: settings, pipeline: f.pipeline, completion: { _ in done.append(true) })
            _ = await done.wait(for: 1)
            #expect(applied.values == [128], "a loaded image comes through the transition")
            widget.osprey.setImage(
                with: f.source("/image/transition"), settings: settings, pipeline: f.pipeline, completion: { _ in done.append(true) })
            #expect(applied.values == [128] && widget.shown.last??.width == 128, "a memory hit is displayed without the transition")
            let forced = TargetSettings(
                transition: ImageTransition<TestWidget>(forced: true) { widget, content in
                    applied.append(-content.width)
                    widget.display(content)
                }, sizedToTarget: false)
            widget.osprey.setImage(
                with: f.source("/image/transition"), settings: forced, pipeline: f.pipeline, completion: { _ in done.append(true) })
            #expect(applied.values == [128, -128], "a forced transition runs for the memory hit too, before setImage returns")
        }
    }
}

/// A main-actor widget whose content is the image itself, recording what it displayed.
@MainActor
final class TestWidget: ImageTarget {
    let ospreyController = ImageTargetController()
    var pixelSize: (width: Int, height: Int)?
    private(set) var shown: [Image?] = []
    var ospreyPixelSize: (width: Int, height: Int)? { pixelSize }
    var ospreyHasContent: Bool { shown.last.flatMap { $0 } != nil }
    nonisolated static func makeContent(_ image: Image) -> Image? { image }
    func display(_ content: Image?) { shown.append(content) }
}

@MainActor
final class TestIndicator: ImageIndicator {
    private(set) var starts = 0
    private(set) var stops = 0
    func startAnimating() { starts += 1 }
    func stopAnimating() { stops += 1 }
}
