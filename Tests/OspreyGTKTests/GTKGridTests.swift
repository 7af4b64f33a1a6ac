import Foundation
import OspreyGTK
import OspreyTestSupport
import Testing

/// `ImageGrid` over a `GListModel` on a real (Xvfb) display: ownership by its widget, loading only
/// what is on screen, a growing model, failures; and a picture sized after layout.
@Suite("GTK grid", .serialized, .timeLimit(.minutes(10)))
@MainActor
struct GTKGridTests {
    /// A pipeline over a fresh cache directory and a colour origin, torn down afterwards.
    func withOrigin(_ body: (LoopbackOrigin, ImagePipeline) async throws -> Void) async throws {
        try await GTKHarness.withOrigin("grid-test", body)
    }

    /// A `GtkStringList` of the colour origin's items `items`.
    static func list(_ origin: LoopbackOrigin, _ items: Range<Int>) -> OpaquePointer {
        let list = gtk_string_list_new(nil)!
        for item in items { gtk_string_list_append(list, origin.itemURL(item).absoluteString) }
        return list
    }

    /// Whether at least one cell is visible and every visible cell whose centre is inside the
    /// grid's viewport shows its item's colour (`colour(position)`).
    static func cellsShowTheirImages(
        _ grid: ImageGrid, in window: UnsafeMutablePointer<GtkWidget>, colour: (Int) -> (red: UInt8, green: UInt8, blue: UInt8)?
    ) -> Bool {
        guard let viewport = WidgetSnapshot.bounds(of: grid.widget, in: window), let texture = WidgetSnapshot.texture(of: window) else {
            return false
        }
        let rgba = WidgetSnapshot.rgba(of: texture)
        let cells = grid.visibleCells
        guard !cells.isEmpty else { return false }
        for (position, picture) in cells {
            guard let bounds = WidgetSnapshot.bounds(of: picture.widget, in: window) else { return false }
            let x = Int(bounds.x + bounds.width / 2)
            let y = Int(bounds.y + bounds.height / 2)
            guard Double(y) > viewport.y, Double(y) < viewport.y + viewport.height, x < texture.width, y < texture.height else { continue }
            let offset = (y * texture.width + x) * 4
            let pixel = (Int(rgba[offset]), Int(rgba[offset + 1]), Int(rgba[offset + 2]))
            guard let expected = colour(position), GTKHarness.close(pixel, expected) else { return false }
        }
        return true
    }

    /// The item numbers of the colour origin's paths requested so far.
    static func requestedItems(_ origin: LoopbackOrigin) -> Set<Int> {
        Set(origin.hitsByPath.keys.compactMap { path in path.hasPrefix("/color/") ? Int(path.dropFirst(7).dropLast(4)) : nil })
    }

    @Test("a grid whose Swift object was dropped keeps working while scrolled; closing its window frees it and disconnects it")
    func ownedByWidget() async throws {
        try await withOrigin { origin, pipeline in
            let list = Self.list(origin, 0..<200)
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            weak var weakGrid: ImageGrid?
            var widget: UnsafeMutablePointer<GtkWidget>!
            do {
                let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
                weakGrid = grid
                widget = grid.widget
            }
            let window = await GTKHarness.window(widget, width: 340, height: 260)
            // Only the widget holds the grid now.
            #expect(ImageGrid.of(widget) != nil)
            await GTKHarness.pump("the first cells to show their images") {
                ImageGrid.of(widget).map { Self.cellsShowTheirImages($0, in: window, colour: ColorImages.color) } ?? false
            }
            ImageGrid.of(widget)?.scroll(toItem: 120)
            await GTKHarness.pump("the cells at item 120 to show their images") {
                guard let grid = ImageGrid.of(widget) else { return false }
                return grid.visibleCells.keys.contains(120) && Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color)
            }
            gtk_window_destroy(GtkWindowPointer(window))
            await GTKHarness.pump("the grid to be released with its widget") { weakGrid == nil }
            let itemsChanged = g_signal_lookup("items-changed", g_list_model_get_type())
            #expect(g_signal_has_handler_pending(UnsafeMutableRawPointer(list), itemsChanged, 0, 0) == 0, "no handler left on the model")
            gtk_string_list_append(list, origin.itemURL(200).absoluteString)  // nothing runs, nothing crashes
        }
    }

    @Test("a grid the app keeps after its window closed loads nothing and touches no freed widget, even from its pending callbacks")
    func keptAfterItsWidget() async throws {
        try await withOrigin { origin, pipeline in
            let grid = ImageGrid(urls: (0..<200).map(origin.itemURL), cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            await GTKHarness.pump("the first cells to show their images") { Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color) }
            let requested = Self.requestedItems(origin)
            // Closing the window unbinds every cell (each schedules the grid's update) and
            // finalises the widget before those callbacks run.
            gtk_window_destroy(GtkWindowPointer(window))
            grid.scroll(toItem: 150)
            grid.retryItem(at: 0)
            for _ in 0..<20 { while g_main_context_iteration(nil, 0) != 0 {} }
            #expect(grid.visibleCells.isEmpty && grid.isIdle)
            #expect(Self.requestedItems(origin) == requested, "nothing loads after the widget is gone")
        }
    }

    @Test(
        "a 10,000-item grid requests only the visible and prefetch rows before any scroll; a jump to the end, or a scrollbar's jump, shows the items there"
    )
    func visibleOnly() async throws {
        try await withOrigin { origin, pipeline in
            let list = Self.list(origin, 0..<10_000)
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            await GTKHarness.pump("the first cells to show their images and the grid to settle") {
                Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color) && grid.isIdle
            }
            // 260 points of 60-point rows (and the cells' padding): rows 0 to 4 at most visible,
            // 2 prefetch rows below.
            let columns = grid.columns
            let allowed = (5 + grid.prefetchRows) * columns
            let requested = Self.requestedItems(origin)
            #expect(requested.count >= 16 && requested.allSatisfy { $0 < allowed }, "requested \(requested.sorted()), at most items 0..<\(allowed)")

            // A scrollbar dragged far sets the adjustment alone.
            let adjustment = grid.vadjustment
            gtk_adjustment_set_value(adjustment, gtk_adjustment_get_upper(adjustment) / 2)
            await GTKHarness.pump("the items halfway to show their images after the adjustment's jump") {
                grid.visibleCells.keys.contains { $0 > 4_000 && $0 < 6_000 } && Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color)
            }
            grid.scroll(toItem: 9_999)
            let shown = await GTKHarness.pump("the last items to show their images") {
                grid.visibleCells.keys.contains(9_999) && Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color)
            }
            if !shown {
                print(
                    "after the jump: visible \(grid.visibleCells.keys.sorted()) requested \(grid.requestedPositions.sorted().suffix(40)) value \(gtk_adjustment_get_value(adjustment)) upper \(gtk_adjustment_get_upper(adjustment)) page \(gtk_adjustment_get_page_size(adjustment)) columns \(grid.columns) rowHeight \(grid.rowHeight)"
                )
            }
            let afterJump = Self.requestedItems(origin)
            #expect(afterJump.count < 6 * allowed, "a jump loads the new position, not what lies between: \(afterJump.count) requests")
        }
    }

    @Test("pages appended to the model while scrolling show their own images, and each URL is downloaded once")
    func growingModel() async throws {
        try await withOrigin { origin, pipeline in
            let list = Self.list(origin, 0..<40)
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            var pages = 0
            grid.onApproachingEnd = {
                let count = Int(g_list_model_get_n_items(list))
                guard count < 200 else { return }
                pages += 1
                for item in count..<(count + 40) { gtk_string_list_append(list, origin.itemURL(item).absoluteString) }
            }
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            for item in stride(from: 0, to: 200, by: 16) {
                await GTKHarness.pump("the model to hold item \(item)") { g_list_model_get_n_items(list) > item }
                grid.scroll(toItem: item)
                await GTKHarness.pump("the cells at item \(item) to show their images") {
                    grid.visibleCells.keys.contains(item) && Self.cellsShowTheirImages(grid, in: window, colour: ColorImages.color)
                }
            }
            #expect(pages >= 4, "the grid asked for the next page as it neared the end: \(pages) pages")
            let repeated = origin.hitsByPath.filter { $0.value > 1 }
            #expect(repeated.isEmpty, "downloaded more than once: \(repeated)")
        }
    }

    @Test("a removal and a splice in the model keep the cells of unchanged items as they are; other items map to URLs through url:")
    func spliceKeepsCells() async throws {
        try await withOrigin { origin, pipeline in
            // Items are item numbers as strings; `url` maps them to the origin's URLs.
            let list = gtk_string_list_new(nil)!
            for item in 0..<60 { gtk_string_list_append(list, "\(item)") }
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            let number = { (item: OpaquePointer) -> Int? in Int(String(cString: gtk_string_object_get_string(item))) }
            let grid = ImageGrid(model: list, url: { number($0).map(origin.itemURL) }, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let itemAt = { (position: Int) -> Int? in
                guard let object = g_list_model_get_item(list, guint(position)) else { return nil }
                defer { g_object_unref(object) }
                return number(OpaquePointer(object))
            }
            let colour = { (position: Int) in itemAt(position).map(ColorImages.color) }
            await GTKHarness.pump("the first cells to show their images") {
                Self.cellsShowTheirImages(grid, in: window, colour: colour) && grid.isIdle
            }
            // The texture each visible item shows, by item.
            let textures = {
                Dictionary(grid.visibleCells.compactMap { position, picture in itemAt(position).map { ($0, picture.texture) } }) { a, _ in a }
            }
            let before = textures()
            gtk_string_list_remove(list, 0)
            let added: [String] = ["100", "101"]
            var pointers = added.map { strdup($0) } + [nil]
            defer { pointers.forEach { free($0) } }
            pointers.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                    gtk_string_list_splice(list, 3, 1, $0)
                }
            }
            await GTKHarness.pump("the cells to show their (new) items' images") {
                Self.cellsShowTheirImages(grid, in: window, colour: colour) && grid.isIdle
            }
            let after = textures()
            let kept = before.keys.filter { $0 != 0 && $0 != 4 && after[$0] != nil }
            #expect(kept.count >= 8)
            for item in kept { #expect(after[item]! === before[item]!, "item \(item) kept its texture: not loaded again") }
            #expect(origin.hitsByPath.filter { $0.value > 1 }.isEmpty)
        }
    }

    @Test("cells on screen download before the rows ahead; the rows ahead load once and show without a download when scrolled to")
    func prioritiesAndPrefetch() async throws {
        try await withOrigin { origin, _ in
            // One download at a time: every load after the first queues, in priority order.
            var configuration = ImageDownloader.Configuration()
            configuration.maximumConcurrentDownloads = 1
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("osprey-grid-priority-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let pipeline = ImagePipeline(
                cache: ImageCache(name: "grid-priority", diskConfig: DiskStorage.Config(name: "grid-priority", directory: directory)),
                downloader: ImageDownloader(configuration: configuration))
            let list = gtk_string_list_new(nil)!
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            for item in 0..<400 { gtk_string_list_append(list, origin.url("/held/\(item).png").absoluteString) }
            let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            grid.prefetchRows = 6
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            // The first download waits at the origin until the gate opens.
            await GTKHarness.pump("the first download to reach the origin and every cell on screen to ask") {
                guard let range = grid.loadRange, origin.heldOrder.count == 1 else { return false }
                return range.visible.allSatisfy(grid.requestedPositions.contains)
            }
            let range = try #require(grid.loadRange, "a load range after layout")
            origin.openGate("held")
            let colour = { (item: Int) in ColorImages.color(item) }
            await GTKHarness.pump("the cells on screen to show their images and the rows ahead to load") {
                grid.isIdle && Self.cellsShowTheirImages(grid, in: window, colour: colour)
            }
            let order = Array(origin.heldOrder.dropFirst())
            let lastOnScreen = order.lastIndex(where: range.visible.contains) ?? -1
            let firstAhead = order.firstIndex { !range.visible.contains($0) } ?? order.count
            #expect(lastOnScreen < firstAhead, "downloads after the first: \(order), on screen \(range.visible)")
            #expect(range.load.allSatisfy { origin.hits("/held/\($0).png") == 1 }, "each item of \(range.load) downloaded once")
            #expect(range.load.upperBound > range.visible.upperBound + 4 * grid.columns, "six rows ahead: \(range)")

            // Four rows down, the cells show what was loaded ahead, without a new download.
            let item = range.visible.lowerBound + 4 * grid.columns
            grid.scroll(toItem: item)
            await GTKHarness.pump("the cells four rows down to show their images") {
                grid.visibleCells.keys.contains(item) && Self.cellsShowTheirImages(grid, in: window, colour: colour)
            }
            let shown = grid.visibleCells.keys.filter(range.load.contains)
            #expect(!shown.isEmpty && shown.allSatisfy { origin.hits("/held/\($0).png") == 1 })
        }
    }

    @Test("a failed cell shows the default failure image and its hook gets the error with the item")
    func failedCell() async throws {
        try await withOrigin { origin, pipeline in
            let list = Self.list(origin, 0..<2)
            let missing = origin.url("/missing.png").absoluteString
            gtk_string_list_append(list, missing)
            gtk_string_list_append(list, origin.itemURL(3).absoluteString)
            defer { g_object_unref(UnsafeMutableRawPointer(list)) }
            let grid = ImageGrid(model: list, cellWidth: 80, cellHeight: 60, pipeline: pipeline)
            var failures: [(position: Int, url: String, error: OspreyError)] = []
            grid.onCellFailure = { position, item, error in
                failures.append((position, String(cString: gtk_string_object_get_string(item)), error))
            }
            let window = await GTKHarness.window(grid.widget, width: 340, height: 260)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            await GTKHarness.pump("the cells to show their images or the failure image") {
                Self.cellsShowTheirImages(grid, in: window) { $0 == 2 ? (150, 60, 60) : ColorImages.color($0) } && !failures.isEmpty
            }
            #expect(failures.count == 1)
            #expect(failures.first?.position == 2 && failures.first?.url == missing)
        }
    }

    @Test("a picture allocated larger than its first decode ends with a texture of its allocated size, with no new download")
    func sizedAfterLayout() async throws {
        try await withOrigin { origin, pipeline in
            let pixels = (0..<(400 * 300)).flatMap { _ -> [UInt8] in [40, 160, 90, 255] }
            origin.setBody("large.png", try Image(rgba: pixels, width: 400, height: 300).encoded(as: .png), cut: 0)
            origin.openGate("large.png")
            let picture = OspreyPicture()
            gtk_widget_set_size_request(picture.widget, 40, 30)
            // Before layout: decoded at the size request.
            picture.osprey.setImage(with: origin.url("/gated/large.png"), pipeline: pipeline)
            await GTKHarness.pump("the first decode") { picture.texture != nil }
            #expect(picture.texture?.width == 40)
            let window = await GTKHarness.window(picture.widget, width: 200, height: 150)
            defer { gtk_window_destroy(GtkWindowPointer(window)) }
            let scale = Int(gtk_widget_get_scale_factor(picture.widget))
            await GTKHarness.pump("the texture to be decoded at the allocated size") {
                picture.texture?.width == Int(gtk_widget_get_width(picture.widget)) * scale
            }
            #expect(gtk_widget_get_width(picture.widget) == 200)
            #expect(origin.hits("/gated/large.png") == 1, "loaded again from the cached original")
        }
    }
}
