import CGtk
import Foundation
import Osprey

/// What loads: the bound cells on screen and ``ImageGrid/prefetchRows`` rows ahead, computed from
/// the vertical adjustment on every scroll step, bind and layout change.
extension ImageGrid {
    /// Scrolls so that item `index` is in the top row (or as far as the grid scrolls); the cells
    /// at the new position load first.
    public func scroll(toItem index: Int) {
        let count = itemCount
        guard count > 0 else { return }
        let item = max(0, min(index, count - 1))
        // GTK's own scroll first: it moves the grid's anchor to the item, so GTK binds the cells
        // there (setting the adjustment far past the bound cells alone leaves GTK 4.8 blank).
        gtk_widget_activate_action_variant(gridView, "list.scroll-to-item", g_variant_new_uint32(guint32(item)))
        let adjustment = vadjustment
        let target = Double(item / columns) * rowHeight
        gtk_adjustment_set_value(adjustment, min(target, gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)))
    }

    /// Loads the cell at `position` again if it is bound (after its load failed, say).
    public func retryItem(at position: Int) {
        for (key, cell) in cells where Self.position(of: cell) == position {
            cells[key]?.requested = nil
            cells[key]?.url = cell.listItemURL(self)
        }
        loadsChanged = true
        updateLoads()
    }

    /// The bound cells GTK shows now (mapped), by item position: GTK keeps many cells bound off screen.
    package var visibleCells: [Int: OspreyPicture] {
        var shown: [Int: OspreyPicture] = [:]
        for cell in cells.values
        where gtk_widget_get_mapped(cell.picture.widget) != 0 && gtk_widget_get_child_visible(cell.picture.widget) != 0 {
            if let position = Self.position(of: cell) { shown[position] = cell.picture }
        }
        return shown
    }

    /// The positions of the cells that asked for their image (loading or shown).
    package var requestedPositions: Set<Int> {
        Set(cells.values.filter { $0.requested != nil }.compactMap(Self.position(of:)))
    }

    /// Whether nothing is loading: no bound cell has a request running and nothing is prefetching.
    package var isIdle: Bool {
        !cells.values.contains { $0.picture.osprey.isLoading } && !(prefetcher?.isPrefetching ?? false)
    }

    /// The options every cell loads with: a downsample to the cell's pixel size first.
    package var cellOptions: [RequestOption] {
        let downsample = ImageProcessors.Downsample(width: cellWidth * scale, height: cellHeight * scale)
        let given = options.reversed().lazy.compactMap { option -> (any ImageProcessing)? in
            if case .processor(let processor) = option { processor } else { nil }
        }.first
        guard let given, !given.identifier.isEmpty else { return options + [.processor(downsample)] }
        return options + [.processor(downsample.append(given))]
    }

    /// Items per row: the grid's width over an allocated cell's (GTK gives every column the same
    /// width), else over a cell's minimum width; counted once per grid width.
    package var columns: Int {
        let width = gtk_widget_get_width(gridView)
        if let counted = countedColumns, counted.width == width { return counted.columns }
        for cell in cells.values {
            guard let parent = gtk_widget_get_parent(cell.picture.widget), gtk_widget_get_width(parent) > 0 else { continue }
            let counted = max(1, Int((Double(width) / Double(gtk_widget_get_width(parent))).rounded()))
            countedColumns = (width, counted)
            return counted
        }
        var minimum: Int32 = 0
        if let parent = cells.values.first.flatMap({ gtk_widget_get_parent($0.picture.widget) }) {
            gtk_widget_measure(parent, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, nil, nil, nil)
        }
        return max(1, min(16, Int(width) / max(cellWidth, Int(minimum))))
    }

    /// One row's height: the adjustment's range over the rows, before layout the cell height.
    package var rowHeight: Double {
        let rows = max(1, (itemCount + columns - 1) / columns)
        let upper = gtk_adjustment_get_upper(vadjustment)
        return upper > 0 ? upper / Double(rows) : Double(cellHeight)
    }

    /// The positions on screen and the positions to load (those and the prefetch rows); `nil`
    /// before layout, when nothing loads.
    package var loadRange: (visible: Range<Int>, load: Range<Int>)? {
        let adjustment = vadjustment
        let page = gtk_adjustment_get_page_size(adjustment)
        let count = itemCount
        guard page > 0, gtk_widget_get_width(gridView) > 0, count > 0 else { return nil }
        let columns = self.columns
        let rows = (count + columns - 1) / columns
        let rowHeight = self.rowHeight
        let value = gtk_adjustment_get_value(adjustment)
        let first = min(rows - 1, max(0, Int(value / rowHeight)))
        let last = min(rows - 1, max(first, Int(((value + page) / rowHeight).rounded(.up)) - 1))
        let loadFirst = scrollsDown ? first : max(0, first - prefetchRows)
        let loadLast = scrollsDown ? min(rows - 1, last + prefetchRows) : last
        if last + prefetchRows + 2 >= rows - 1, approachedAt != count, onApproachingEnd != nil {
            approachedAt = count
            // After this signal: the handler may change the model.
            Task { @MainActor [weak self] in self?.onApproachingEnd?() }
        }
        return (first * columns..<min(count, (last + 1) * columns), loadFirst * columns..<min(count, (loadLast + 1) * columns))
    }

    static func position(of cell: Cell) -> Int? {
        let position = gtk_list_item_get_position(cell.listItem)
        return position == guint.max ? nil : Int(position)
    }

    // MARK: - Factory

    func setup(_ item: OpaquePointer) {
        let picture = OspreyPicture()
        // Sized before any image arrives: GTK lays out (and binds) only what fits.
        gtk_widget_set_size_request(picture.widget, Int32(cellWidth), Int32(cellHeight))
        gtk_list_item_set_child(item, picture.widget)
    }

    private func picture(of item: OpaquePointer) -> OspreyPicture? {
        gtk_list_item_get_child(item).flatMap { OspreyPicture.of($0) }
    }

    func bind(_ item: OpaquePointer) {
        guard let picture = picture(of: item) else { return }
        let key = ObjectIdentifier(picture)
        var cell = Cell(picture: picture, listItem: item, url: nil, requested: nil, task: nil)
        cell.url = cell.listItemURL(self)
        // GTK may rebind a cell to the item it shows (GTK 4.8 unbinds and binds again every item
        // an items-changed moved): keep its image.
        if let kept = unbound.removeValue(forKey: key), kept.url == cell.url {
            cell.requested = kept.url
        } else if let previous = cells[key], previous.requested != nil, previous.requested == cell.url {
            cell.requested = previous.requested
            cell.task = previous.task
        } else {
            picture.osprey.cancelDownloadTask()
            picture.display(placeholder.flatMap { OspreyPicture.makeContent($0) })
        }
        cells[key] = cell
        // GTK binds and unbinds tens of cells a frame while scrolling (it keeps ~500 bound):
        // the cell starts here if it is in the ranges of the last update, and the ranges, the
        // priorities and the prefetches are looked at once, after the binds of this turn.
        if cell.requested == nil, !modelChanging, let last = lastLoads, let position = Self.position(of: cell), last.load.contains(position) {
            start(key, cell, options: cellOptions + [.downloadPriority(last.visible.contains(position) ? .normal : .low)])
        }
        scheduleUpdate()
    }

    func unbind(_ item: OpaquePointer) {
        guard let picture = picture(of: item) else { return }
        scheduleUpdate()
        let key = ObjectIdentifier(picture)
        // GTK 4.8 unbinds and binds again every item an items-changed moved: the picture keeps its
        // image, or its load, until an idle callback after the unbind finds it still unbound.
        if let requested = cells.removeValue(forKey: key)?.requested {
            unbound[key] = (picture, requested)
            scheduleSweep()
            return
        }
        picture.osprey.cancelDownloadTask()
        picture.display(nil)
    }

    /// Cancels the loads of pictures still unbound after the unbinds of this turn; those showing
    /// their image keep it for a later bind to the same URL.
    private func scheduleSweep() {
        guard !sweepScheduled else { return }
        sweepScheduled = true
        GObjectSupport.idle(weakly: self) { $0.sweepUnbound() }
    }

    /// Marks the loads changed and runs ``updateLoads()`` once, from an idle callback, after the
    /// binds and unbinds of this main-loop turn.
    private func scheduleUpdate() {
        loadsChanged = true
        guard !updateScheduled else { return }
        updateScheduled = true
        GObjectSupport.idle(weakly: self) { grid in
            grid.updateScheduled = false
            grid.updateLoads()
        }
    }

    private func sweepUnbound() {
        sweepScheduled = false
        for (key, kept) in unbound where !kept.picture.isAlive || kept.picture.osprey.isLoading {
            unbound[key] = nil
            kept.picture.osprey.cancelDownloadTask()
            kept.picture.display(nil)
        }
    }

    func scrolled() {
        let value = gtk_adjustment_get_value(vadjustment)
        if value != lastScrollValue { scrollsDown = value > lastScrollValue }
        lastScrollValue = value
        reanchorAfterJump()
        updateLoads()
    }

    /// After a jump past every bound cell (a scrollbar dragged far: GTK 4.8 then binds nothing
    /// and the grid stays blank), moves GTK's anchor to the first visible item with its own
    /// `list.scroll-to-item`, which binds the cells there; the scroll position stays.
    private func reanchorAfterJump() {
        guard !reanchoring, let range = loadRange, !range.visible.isEmpty else { return }
        let bound = cells.values.contains { Self.position(of: $0).map(range.visible.contains) ?? false }
        guard !bound, !cells.isEmpty else { return }
        reanchoring = true
        defer { reanchoring = false }
        let value = gtk_adjustment_get_value(vadjustment)
        gtk_widget_activate_action_variant(gridView, "list.scroll-to-item", g_variant_new_uint32(guint32(range.visible.lowerBound)))
        gtk_adjustment_set_value(vadjustment, value)
    }

    /// The model changed: GTK 4.8 unbinds and binds again every item it moved, now or at its next
    /// layout. Loads start once that is over (an idle callback), so that a cell is not started,
    /// cancelled and started again on the way.
    func itemsChanged(at position: Int, removed: Int, added: Int) {
        countedColumns = nil
        // The prefetches follow their items to their new positions; those of removed items stop.
        var moved: [Int: URL] = [:]
        var gone: [URL] = []
        for (prefetchedAt, url) in prefetched {
            if prefetchedAt < position {
                moved[prefetchedAt] = url
            } else if prefetchedAt >= position + removed {
                moved[prefetchedAt - removed + added] = url
            } else {
                gone.append(url)
            }
        }
        if !gone.isEmpty { prefetcher?.stopPrefetching(with: gone) }
        prefetched = moved
        guard !modelChanging else { return }
        modelChanging = true
        GObjectSupport.idle(weakly: self) { grid in
            grid.modelChanging = false
            grid.loadsChanged = true
            grid.updateLoads()
        }
    }

    // MARK: - Loading

    /// Starts the bound cells in the load range that have not asked for their image and
    /// prefetches the positions there GTK has not bound (``ImagePrefetcher``). A cell on screen
    /// loads at ``DownloadPriority/normal`` priority, one in the rows ahead at
    /// ``DownloadPriority/low``; a cell's priority follows it as it scrolls into view.
    func updateLoads() {
        guard !modelChanging, !isFinalised, let range = loadRange else { return }
        let scale = Int(max(1, gtk_widget_get_scale_factor(gridView)))
        // A scroll within a row changes nothing: no cell, priority or prefetch to look at.
        if !loadsChanged, let last = lastLoads, last.visible == range.visible, last.load == range.load, scale == self.scale { return }
        loadsChanged = false
        lastLoads = range
        if scale != self.scale {
            // The cells' downsample changed: prefetches made at the old size are of no use.
            prefetcher?.stopPrefetching()
            prefetcher = nil
            prefetched = [:]
            self.scale = scale
        }
        let options = cellOptions
        var bound = Set<Int>(minimumCapacity: cells.count)
        for (key, cell) in cells {
            guard let position = Self.position(of: cell) else { continue }
            bound.insert(position)
            guard range.load.contains(position) else { continue }
            let priority: DownloadPriority = range.visible.contains(position) ? .normal : .low
            // A cell that asked goes on until GTK unbinds it: cancelling it as it leaves the range
            // and asking again as it comes back downloaded some images twice while scrolling fast.
            if cell.requested == nil {
                start(key, cell, options: options + [.downloadPriority(priority)])
            } else if let task = cell.task, !task.isCompleted {
                task.priority = priority
            }
        }
        prefetch(range.load.filter { !bound.contains($0) }, bound: bound, options: options)
    }

    /// Prefetches the items at `positions` (in order) with the cells' `options`, and stops the
    /// prefetches of positions no longer among them that scrolled away. One a cell now shows
    /// (its position is `bound`) goes on: the cell's request joins it or finds its image in
    /// memory (stopping it while the cell's request was still reading the disk cache downloaded
    /// the image twice).
    private func prefetch(_ positions: [Int], bound: Set<Int>, options: [RequestOption]) {
        let prefetcher = self.prefetcher ?? ImagePrefetcher(options: options, pipeline: pipeline)
        self.prefetcher = prefetcher
        var wanted: [Int: URL] = [:]
        var new: [URL] = []
        for position in positions {
            if let url = prefetched[position] {
                wanted[position] = url
            } else if let url = url(at: position) {
                wanted[position] = url
                new.append(url)
            }
        }
        let stale = prefetched.compactMap { position, url in wanted[position] == nil && !bound.contains(position) ? url : nil }
        if !stale.isEmpty { prefetcher.stopPrefetching(with: stale) }
        if !new.isEmpty { prefetcher.startPrefetching(with: new) }
        prefetched = wanted
    }

    private func start(_ key: ObjectIdentifier, _ cell: Cell, options: [RequestOption]) {
        let url = cell.url
        cells[key]?.requested = url ?? URL(fileURLWithPath: "/")  // asked, even with no URL
        let task = cell.picture.osprey.setImage(
            with: url, placeholder: placeholder, options: options, settings: settings, pipeline: pipeline,
            completion: { [weak self, weak picture = cell.picture] result in
                guard case .failure(let error) = result, !error.isCancellation else { return }
                if case .pipeline(.notCurrentSourceTask) = error { return }
                guard let self, let picture, let cell = self.cells[ObjectIdentifier(picture)], cell.url == url,
                    let position = Self.position(of: cell), let item = gtk_list_item_get_item(cell.listItem)
                else { return }
                self.onCellFailure?(position, OpaquePointer(item), error)
            })
        cells[key]?.task = task
    }
}

extension ImageGrid.Cell {
    /// The URL of the item the cell's list item holds now.
    @MainActor func listItemURL(_ grid: ImageGrid) -> URL? {
        gtk_list_item_get_item(listItem).flatMap { grid.itemURL(OpaquePointer($0)) }
    }
}
