import CGtk
import Foundation
import Osprey

/// A scrolling `GtkGridView` of remote images over any `GListModel`, with recycled cells: Osprey's
/// answer to a collection view with `kf.setImage` in `cellForItemAt`.
///
/// ```swift
/// let urls = gtk_string_list_new(nil)!          // a GListModel of URL strings
/// gtk_string_list_append(urls, "https://example.com/1.jpg")
/// let grid = ImageGrid(model: urls)
/// grid.onApproachingEnd = { gtk_string_list_append(urls, "https://example.com/next.jpg") }
/// gtk_window_set_child(GtkWindowPointer(window), grid.widget)
/// ```
///
/// The widget owns the grid, as it owns an ``OspreyPicture``: the grid lives as long as ``widget``
/// whether or not the program keeps it, and when the widget is finalised its handlers are
/// disconnected and its loads cancelled. The grid follows the model's
/// `items-changed` (append a page, remove, splice): GTK keeps the cells of unchanged items, and
/// their images stay as they are.
///
/// Every cell has its size (``cellWidth``×``cellHeight`` points) before any image arrives, and
/// only the items on screen and ``prefetchRows`` rows ahead in the scroll direction load,
/// whatever the item count: the cells on screen at normal priority, the rows ahead at low
/// priority (their bound cells, and an ``Osprey/ImagePrefetcher`` for the items GTK has not
/// bound yet), a cell's priority following it into view. GTK binds many more cells than it
/// shows; those wait without loading until they scroll near. A load goes on until GTK unbinds
/// its cell (then a running download finishes into the cache at low priority, so coming back
/// costs no download).
/// ``scroll(toItem:)`` moves GTK's own anchor, so the cells at the new position are bound and load
/// at once; so does a scrollbar dragged past every bound cell. A failed cell shows a failure image (by default a grey-red tile) and is reported to
/// ``onCellFailure``.
///
/// Every cell decodes at the cell size times the scale factor (a downsample first in the chain,
/// so a 4000×3000 photo shrinks on load).
@MainActor
public final class ImageGrid {
    /// The `GListModel` shown, one cell per item.
    public let model: OpaquePointer
    /// The cell size in points. Default 200×150.
    public let cellWidth: Int
    /// The cell height in points.
    public let cellHeight: Int
    /// Rows ahead of the visible ones that load, in the scroll direction (down before any
    /// scroll). Default 2.
    public var prefetchRows = 2
    /// The `GtkScrolledWindow` holding the grid view; put it in a window.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// Called when the last visible row comes within ``prefetchRows`` + 2 rows of the end (once
    /// per item count), to append the next page to the model. Default `nil`.
    public var onApproachingEnd: (@MainActor () -> Void)?
    /// Called when a cell's load fails (not when it is cancelled), with the cell's position, its
    /// model item (a `GObject *`) and the error, e.g. to offer a retry (``retryItem(at:)``).
    /// Default `nil`.
    public var onCellFailure: (@MainActor (_ position: Int, _ item: OpaquePointer, _ error: OspreyError) -> Void)?

    /// The `GtkGridView`.
    let gridView: UnsafeMutablePointer<GtkWidget>
    let pipeline: ImagePipeline
    let options: [RequestOption]
    let settings: TargetSettings<OspreyPicture>
    let placeholder: Image?
    /// The URL of an item (a `GObject *`).
    let itemURL: @MainActor (OpaquePointer) -> URL?
    /// The bound cells, by picture.
    var cells: [ObjectIdentifier: Cell] = [:]
    var lastScrollValue = 0.0
    /// Whether a jump is being re-anchored (its own scrolls are not jumps).
    var reanchoring = false
    /// Whether an items-changed is being followed (loads wait for its idle callback).
    var modelChanging = false
    /// Pictures unbound with their image shown or loading, and its URL: bound again to that URL,
    /// they keep it (held here, so their identifiers are not reused).
    var unbound: [ObjectIdentifier: (picture: OspreyPicture, url: URL)] = [:]
    var sweepScheduled = false
    var scrollsDown = true
    var scale = 1
    /// The item count `onApproachingEnd` was called at.
    var approachedAt: Int?
    /// The columns counted from a bound cell, and the grid width they were counted at.
    var countedColumns: (width: Int32, columns: Int)?
    /// The ranges the last ``updateLoads()`` worked on, and whether the cells changed since (a
    /// bind, an unbind, a model change, a retry): a scroll that moves neither range does nothing.
    var lastLoads: (visible: Range<Int>, load: Range<Int>)?
    var loadsChanged = true
    /// Whether an idle callback will run ``updateLoads()`` (after binds and unbinds).
    var updateScheduled = false
    /// Whether the widget is finalised (the grid may outlive it in its owner's hands): nothing
    /// loads any more, and an update scheduled before touches no GTK object.
    var isFinalised = false
    /// Loads the positions ahead that GTK has not bound, at the cells' size for ``scale`` (made again when it changes).
    var prefetcher: ImagePrefetcher?
    /// The URLs given to the prefetcher and not taken back, by position.
    var prefetched: [Int: URL] = [:]
    /// Objects this grid connected handlers to, referenced until the widget is finalised.
    private var connected: [(instance: UnsafeMutableRawPointer, handler: gulong)] = []
    private static let dataKey = "osprey-image-grid"

    /// One bound cell: its picture, GTK's list item, its item's URL, the URL it asked for
    /// (`nil` until it loads) and its task.
    struct Cell {
        let picture: OspreyPicture
        let listItem: OpaquePointer
        var url: URL?
        var requested: URL?
        var task: ImageTask?
    }

    /// A grid showing `model` (a `GListModel *`; the grid takes a reference): `url` maps an item
    /// (a `GObject *`) to its image URL (default `nil`: the items are `GtkStringObject`s of URL
    /// strings, as in a `GtkStringList`). Cells are `cellWidth`×`cellHeight` points (default
    /// 200×150) and load through `pipeline` (default ``Osprey/ImagePipeline/shared``) with
    /// `options` (default none; a processor given here runs after the downsample to the cell).
    /// `settings` default `nil`: the spinner, a fade, and a grey-red failure image.
    /// `placeholder` default `nil` (an empty cell). Needs GTK initialised.
    public init(
        model: OpaquePointer, url: (@MainActor (OpaquePointer) -> URL?)? = nil, cellWidth: Int = 200, cellHeight: Int = 150,
        pipeline: ImagePipeline = .shared, options: [RequestOption] = [], settings: TargetSettings<OspreyPicture>? = nil,
        placeholder: Image? = nil
    ) {
        GLibMainActor.install()
        self.model = model
        self.itemURL = url ?? Self.stringURL
        self.cellWidth = max(1, cellWidth)
        self.cellHeight = max(1, cellHeight)
        self.pipeline = pipeline
        self.options = options
        var settings = settings ?? TargetSettings(failureImage: Self.failureImage, indicator: OspreyPicture.spinner, transition: .fade())
        settings.sizedToTarget = false  // the grid sizes every request itself, identically
        self.settings = settings
        self.placeholder = placeholder
        let selection = gtk_no_selection_new(OpaquePointer(g_object_ref(UnsafeMutableRawPointer(model))))
        let factory = gtk_signal_list_item_factory_new()!
        gridView = gtk_grid_view_new(selection, factory)!
        // Enough for a wide window of small cells: GTK binds a number of cells proportional to it.
        gtk_grid_view_set_max_columns(OpaquePointer(gridView), 16)
        widget = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(OpaquePointer(widget), gridView)
        gtk_widget_set_vexpand(widget, 1)
        gtk_widget_set_hexpand(widget, 1)
        connectHandlers(factory: UnsafeMutableRawPointer(factory))
        // The widget owns the grid; finalising it disconnects and cancels everything.
        g_object_set_data_full(
            GObjectSupport.object(widget), Self.dataKey, Unmanaged.passRetained(self).toOpaque(),
            { data in
                let grid = Unmanaged<ImageGrid>.fromOpaque(data!)
                MainActor.assumeIsolated { grid.takeUnretainedValue().widgetFinalised() }
                grid.release()
            })
    }

    /// A grid of `urls` (a `GtkStringList` of them); the other arguments as in
    /// ``init(model:url:cellWidth:cellHeight:pipeline:options:settings:placeholder:)``.
    public convenience init(
        urls: [URL], cellWidth: Int = 200, cellHeight: Int = 150, pipeline: ImagePipeline = .shared, options: [RequestOption] = [],
        settings: TargetSettings<OspreyPicture>? = nil, placeholder: Image? = nil
    ) {
        let list = gtk_string_list_new(nil)!
        for url in urls { gtk_string_list_append(list, url.absoluteString) }
        self.init(
            model: list, cellWidth: cellWidth, cellHeight: cellHeight, pipeline: pipeline, options: options, settings: settings,
            placeholder: placeholder)
        g_object_unref(UnsafeMutableRawPointer(list))
    }

    /// The grid of `widget` (its ``widget``), if any.
    public static func of(_ widget: UnsafeMutablePointer<GtkWidget>) -> ImageGrid? {
        guard let data = g_object_get_data(GObjectSupport.object(widget), dataKey) else { return nil }
        return Unmanaged<ImageGrid>.fromOpaque(data).takeUnretainedValue()
    }

    /// The URL of a `GtkStringObject` item.
    private static func stringURL(_ item: OpaquePointer) -> URL? {
        let instance = UnsafeMutableRawPointer(item).assumingMemoryBound(to: GTypeInstance.self)
        guard g_type_check_instance_is_a(instance, gtk_string_object_get_type()) != 0,
            let string = gtk_string_object_get_string(item)
        else { return nil }
        return URL(string: String(cString: string))
    }

    /// A 4×3 grey-red tile, (150, 60, 60): the default failure image.
    static let failureImage: Image? = try? Image(rgba: (0..<12).flatMap { _ -> [UInt8] in [150, 60, 60, 255] }, width: 4, height: 3)

    /// The item count of the model.
    var itemCount: Int { Int(g_list_model_get_n_items(model)) }

    /// The URL of the item at `position`, `nil` past the end or for an item without one.
    package func url(at position: Int) -> URL? {
        guard position >= 0, position < itemCount, let item = g_list_model_get_item(model, guint(position)) else { return nil }
        defer { g_object_unref(item) }
        return itemURL(OpaquePointer(item))
    }

    package var vadjustment: UnsafeMutablePointer<GtkAdjustment> { gtk_scrolled_window_get_vadjustment(OpaquePointer(widget))! }

    // MARK: - Handlers

    private func connectHandlers(factory: UnsafeMutableRawPointer) {
        typealias ItemHandler = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void
        let setup: ItemHandler = { _, item, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: ImageGrid.self)?.setup(item!) }
        }
        let bind: ItemHandler = { _, item, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: ImageGrid.self)?.bind(item!) }
        }
        let unbind: ItemHandler = { _, item, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: ImageGrid.self)?.unbind(item!) }
        }
        let scrolled: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            MainActor.assumeIsolated { GObjectSupport.owner(data, as: ImageGrid.self)?.scrolled() }
        }
        let itemsChanged: @convention(c) (OpaquePointer?, guint, guint, guint, UnsafeMutableRawPointer?) -> Void = {
            _, position, removed, added, data in
            MainActor.assumeIsolated {
                GObjectSupport.owner(data, as: ImageGrid.self)?.itemsChanged(at: Int(position), removed: Int(removed), added: Int(added))
            }
        }
        let adjustment = UnsafeMutableRawPointer(vadjustment)
        let modelObject = UnsafeMutableRawPointer(model)
        let handlers: [(UnsafeMutableRawPointer, String, GCallback)] = [
            (factory, "setup", unsafeBitCast(setup, to: GCallback.self)),
            (factory, "bind", unsafeBitCast(bind, to: GCallback.self)),
            (factory, "unbind", unsafeBitCast(unbind, to: GCallback.self)),
            (adjustment, "value-changed", unsafeBitCast(scrolled, to: GCallback.self)),
            (adjustment, "changed", unsafeBitCast(scrolled, to: GCallback.self)),
            (modelObject, "items-changed", unsafeBitCast(itemsChanged, to: GCallback.self))
        ]
        for (instance, signal, handler) in handlers {
            if !connected.contains(where: { $0.instance == instance }) { g_object_ref(instance) }
            connected.append((instance, GObjectSupport.connect(instance, signal, handler, weakly: self)))
        }
    }

    private func widgetFinalised() {
        isFinalised = true
        for (instance, handler) in connected { g_signal_handler_disconnect(instance, handler) }
        var released: [UnsafeMutableRawPointer] = []
        for (instance, _) in connected where !released.contains(instance) {
            released.append(instance)
            g_object_unref(instance)
        }
        connected = []
        for cell in cells.values { cell.picture.osprey.cancelDownloadTask() }
        cells = [:]
        for kept in unbound.values { kept.picture.osprey.cancelDownloadTask() }
        unbound = [:]
        prefetcher?.stopPrefetching()
        prefetcher = nil
    }
}
