import CGtk
import Foundation
import Osprey

/// A scrolling `GtkGridView` of remote images with recycled cells, Osprey's answer to a
/// collection view with `kf.setImage` in `cellForItemAt`.
///
/// Its `GtkSignalListItemFactory` makes one ``OspreyPicture`` per cell; **bind** starts the item's
/// load (a memory hit is on screen in the same turn), **unbind** cancels it: nothing more is shown
/// and its result is dropped, while a download already running finishes into the cache at low
/// priority, so scrolling back never downloads it again. A cell rebound to another item shows that
/// item's placeholder or image, never the previous item's. While scrolling, the images of the rows
/// about to come into view (in the scroll direction, ``prefetchRows`` rows) are prefetched at low
/// priority (an ``Osprey/ImagePrefetcher``); prefetches of rows that scrolled away are stopped.
///
/// Every cell decodes at the cell size times the scale factor (a downsample first in the chain,
/// so a 4000×3000 photo shrinks on load), the same size for bound cells and prefetches, so a
/// prefetch is a memory hit for its cell. Keep the grid object alive as long as ``widget``.
@MainActor
public final class ImageGrid {
    /// The images, one per item.
    public let urls: [URL]
    /// The cell size in points. Default 200×150.
    public let cellWidth: Int
    /// The cell height in points.
    public let cellHeight: Int
    /// Rows ahead of the visible ones to prefetch in the scroll direction. Default 2.
    public var prefetchRows = 2
    /// The `GtkScrolledWindow` holding the grid view; put it in a window.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The `GtkGridView`.
    public let gridView: UnsafeMutablePointer<GtkWidget>
    /// The cells bound now, by item index.
    public private(set) var boundCells: [Int: OspreyPicture] = [:]
    /// The bound cells GTK shows now (mapped): the grid keeps some cells bound off screen.
    public var visibleCells: [Int: OspreyPicture] {
        boundCells.filter { gtk_widget_get_mapped($0.value.widget) != 0 && gtk_widget_get_child_visible($0.value.widget) != 0 }
    }
    /// The item each bound cell shows.
    private var boundIndex: [ObjectIdentifier: Int] = [:]

    private let pipeline: ImagePipeline
    private let options: [RequestOption]
    private let settings: TargetSettings<OspreyPicture>
    private let placeholder: Image?
    /// The prefetcher for the current scale factor (its options are the cells').
    private var prefetcher: (scale: Int, prefetcher: ImagePrefetcher)?
    /// The items being prefetched.
    private var prefetching: Set<Int> = []
    private var lastScrollValue = 0.0
    private var scale = 1

    /// A grid of `urls` with cells of `cellWidth`×`cellHeight` points (default 200×150), loading
    /// through `pipeline` (default ``Osprey/ImagePipeline/shared``) with `options` (default none;
    /// a processor given here runs after the downsample to the cell). `settings` default: the
    /// spinner indicator, a fade, no failure image; `placeholder` default `nil` (an empty cell).
    public init(
        urls: [URL], cellWidth: Int = 200, cellHeight: Int = 150, pipeline: ImagePipeline = .shared, options: [RequestOption] = [],
        settings: TargetSettings<OspreyPicture> = TargetSettings(indicator: OspreyPicture.spinner, transition: .fade()),
        placeholder: Image? = nil
    ) {
        self.urls = urls
        self.cellWidth = max(1, cellWidth)
        self.cellHeight = max(1, cellHeight)
        self.pipeline = pipeline
        self.options = options
        var settings = settings
        settings.sizedToTarget = false  // the grid sizes every request itself, identically
        self.settings = settings
        self.placeholder = placeholder
        let strings = GtkStringListBuilder.make(urls.map(\.absoluteString))
        let selection = gtk_no_selection_new(strings)
        let factory = gtk_signal_list_item_factory_new()!
        gridView = gtk_grid_view_new(selection, factory)!
        gtk_grid_view_set_max_columns(OpaquePointer(gridView), 64)
        widget = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(OpaquePointer(widget), gridView)
        gtk_widget_set_vexpand(widget, 1)
        gtk_widget_set_hexpand(widget, 1)
        connectFactory(UnsafeMutableRawPointer(factory))
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(widget))!
        let handler: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let grid = Unmanaged<ImageGrid>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { grid.scrolled() }
        }
        GObjectSupport.connect(UnsafeMutableRawPointer(adjustment), "value-changed", unsafeBitCast(handler, to: GCallback.self), selfPointer)
    }

    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The options every cell and prefetch loads with: a downsample to the cell's pixel size first.
    public var cellOptions: [RequestOption] {
        let downsample = ImageProcessors.Downsample(width: cellWidth * scale, height: cellHeight * scale)
        let given = options.reversed().lazy.compactMap { option -> (any ImageProcessing)? in
            if case .processor(let processor) = option { processor } else { nil }
        }.first
        guard let given, !given.identifier.isEmpty else { return options + [.processor(downsample)] }
        return options + [.processor(downsample.append(given))]
    }

    /// Whether nothing is loading: no bound cell and no prefetch has a request running.
    public var isIdle: Bool {
        !(prefetcher?.prefetcher.isPrefetching ?? false) && !boundCells.values.contains { $0.osprey.isLoading }
    }

    /// Scrolls so that item `index` is in the top row (or as far as the grid scrolls).
    public func scroll(toItem index: Int) {
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(widget))!
        let columns = self.columns
        let rowHeight = self.rowHeight(adjustment, columns: columns)
        let target = Double(max(0, min(index, urls.count - 1)) / columns) * rowHeight
        gtk_adjustment_set_value(adjustment, min(target, gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)))
    }

    /// Items per row: the bound cells in the first bound row (the grid binds whole rows), else
    /// the grid's width over the cell width. Counted once per grid width: counting reads the
    /// bounds of every bound cell, too much to do on every scroll step.
    public var columns: Int {
        let width = gtk_widget_get_width(gridView)
        if let counted = countedColumns, counted.width == width { return counted.columns }
        let top = { (picture: OspreyPicture) in WidgetSnapshot.bounds(of: picture.widget, in: self.gridView)?.y }
        if let first = boundCells.keys.min(), let firstTop = boundCells[first].flatMap(top) {
            let tops = boundCells.values.map(top)
            let inRow = tops.filter { $0 == firstTop }.count
            if inRow > 0 {
                // Kept only when a row follows: a last row may be short.
                if tops.contains(where: { ($0 ?? firstTop) > firstTop }) { countedColumns = (width, inRow) }
                return inRow
            }
        }
        return max(1, Int(width) / cellWidth)
    }
    /// The columns counted from the bound cells, and the grid width they were counted at.
    private var countedColumns: (width: Int32, columns: Int)?

    private func rowHeight(_ adjustment: UnsafeMutablePointer<GtkAdjustment>, columns: Int) -> Double {
        let rows = max(1, (urls.count + columns - 1) / columns)
        let upper = gtk_adjustment_get_upper(adjustment)
        return upper > 0 ? upper / Double(rows) : Double(cellHeight)
    }

    // MARK: - Factory

    private func connectFactory(_ factory: UnsafeMutableRawPointer) {
        typealias ItemHandler = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void
        let setup: ItemHandler = { _, item, data in
            let grid = Unmanaged<ImageGrid>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { grid.setup(item!) }
        }
        let bind: ItemHandler = { _, item, data in
            let grid = Unmanaged<ImageGrid>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { grid.bind(item!) }
        }
        let unbind: ItemHandler = { _, item, data in
            let grid = Unmanaged<ImageGrid>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { grid.unbind(item!) }
        }
        GObjectSupport.connect(factory, "setup", unsafeBitCast(setup, to: GCallback.self), selfPointer)
        GObjectSupport.connect(factory, "bind", unsafeBitCast(bind, to: GCallback.self), selfPointer)
        GObjectSupport.connect(factory, "unbind", unsafeBitCast(unbind, to: GCallback.self), selfPointer)
    }

    private func setup(_ item: OpaquePointer) {
        let picture = OspreyPicture()
        gtk_widget_set_size_request(picture.widget, Int32(cellWidth), Int32(cellHeight))
        gtk_list_item_set_child(item, picture.widget)
    }

    private func picture(of item: OpaquePointer) -> OspreyPicture? {
        gtk_list_item_get_child(item).flatMap { OspreyPicture.of($0) }
    }

    private func bind(_ item: OpaquePointer) {
        guard let picture = picture(of: item) else { return }
        let index = Int(gtk_list_item_get_position(item))
        guard index < urls.count else { return }
        scale = Int(max(1, gtk_widget_get_scale_factor(gridView)))
        // GTK may rebind a cell to another item without an unbind first.
        if let previous = boundIndex[ObjectIdentifier(picture)] { boundCells[previous] = nil }
        boundIndex[ObjectIdentifier(picture)] = index
        boundCells[index] = picture
        picture.osprey.setImage(with: .url(urls[index]), placeholder: placeholder, options: cellOptions, settings: settings, pipeline: pipeline)
    }

    private func unbind(_ item: OpaquePointer) {
        guard let picture = picture(of: item) else { return }
        if let index = boundIndex.removeValue(forKey: ObjectIdentifier(picture)) { boundCells[index] = nil }
        picture.osprey.cancelDownloadTask()
        picture.display(nil)
    }

    // MARK: - Prefetching

    private func scrolled() {
        let adjustment = gtk_scrolled_window_get_vadjustment(OpaquePointer(widget))!
        let value = gtk_adjustment_get_value(adjustment)
        let direction = value - lastScrollValue
        lastScrollValue = value
        guard direction != 0 else { return }
        // Measured once: `columns` reads the bounds of every bound cell.
        let columns = self.columns
        let rowHeight = self.rowHeight(adjustment, columns: columns)
        let firstRow = Int(value / rowHeight)
        let lastRow = Int((value + gtk_adjustment_get_page_size(adjustment)) / rowHeight)
        let rows = direction > 0 ? (lastRow + 1)...(lastRow + prefetchRows) : max(0, firstRow - prefetchRows)...max(0, firstRow - 1)
        let wanted = Set(rows.flatMap { row in min(urls.count, row * columns)..<min(urls.count, (row + 1) * columns) })
        let prefetcher = currentPrefetcher()
        prefetcher.stopPrefetching(with: prefetching.subtracting(wanted).map { urls[$0] })
        let new = wanted.filter { boundCells[$0] == nil }.sorted()
        prefetcher.startPrefetching(with: new.map { urls[$0] })
        prefetching = Set(new)
    }

    /// The prefetcher loading with the cells' options at the current scale factor.
    private func currentPrefetcher() -> ImagePrefetcher {
        if let prefetcher, prefetcher.scale == scale { return prefetcher.prefetcher }
        prefetcher?.prefetcher.stopPrefetching()
        // A row about to show is a memory hit when it binds: disk hits are read into memory.
        let made = ImagePrefetcher(options: cellOptions, pipeline: pipeline, promotesDiskHitsToMemory: true)
        prefetcher = (scale, made)
        return made
    }
}

/// Builds a `GtkStringList` (a `GListModel *`) from Swift strings.
enum GtkStringListBuilder {
    static func make(_ strings: [String]) -> OpaquePointer {
        let list = gtk_string_list_new(nil)!
        for string in strings { gtk_string_list_append(list, string) }
        return list
    }
}
