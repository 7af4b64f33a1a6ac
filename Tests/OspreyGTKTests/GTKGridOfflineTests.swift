import Foundation
import OspreyGTK
import Testing

/// An `ImageGrid` whose pipeline is told the network is unavailable, then available again
/// (`ImagePipeline.handleNetworkChange(available:metered:)`, what GIO's `GNetworkMonitor` drives),
/// read back in pixels.
extension GTKGridTests {
    @Test(
        "offline, a grid's cells fail at once with nothing sent and show the failure tile; when the network comes back they show their images with no call from the app"
    )
    func offlineCellsComeBack() async throws {
        try await withOrigin { origin, pipeline in
            pipeline.handleNetworkChange(available: false, metered: false)
            let list = Self.list(origin, 0..<60)
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            let failed = OfflineFailures()
            grid.onCellFailure = { position, _, error in
                if case .download(.offline) = error { failed.positions.insert(position) }
            }
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            await GTKHarness.pump("every visible cell to fail offline and show the failure tile") {
                let visible = Set(grid.visibleCells.keys)
                return !visible.isEmpty && visible.isSubset(of: failed.positions)
                    && Self.cellsShowTheirImages(grid, in: window) { _ in (150, 60, 60) }
            }
            let visible = Set(grid.visibleCells.keys)
            #expect(visible.count >= 8 && visible.isSubset(of: failed.positions), "visible \(visible.sorted()), failed \(failed.positions.sorted())")
            #expect(origin.hitsByPath.isEmpty, "nothing was sent offline: \(origin.hitsByPath)")

            pipeline.handleNetworkChange(available: true, metered: false)
            await GTKHarness.pump("the cells to show their images after the network came back") {
                Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color) && grid.isIdle
            }
            #expect(Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color))
            for position in grid.visibleCells.keys {
                #expect(origin.hits("/color/\(position).png") == 1, "item \(position) downloaded once after the network came back")
            }
            #expect(Self.requestedItems(origin).count > visible.count, "the rows ahead are prefetched again too")
        }
    }
}

/// The positions of the cells that failed offline.
@MainActor
private final class OfflineFailures {
    var positions = Set<Int>()
}
