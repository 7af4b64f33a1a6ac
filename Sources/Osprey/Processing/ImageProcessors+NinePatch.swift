import COspreyVips

extension ImageProcessors {
    /// Draws a nine-patch around the image as a frame (thumbor's `frame` filter). The patch is an
    /// Android nine-patch: its 1-pixel border marks, in opaque black, the stretchable columns (top
    /// row) and rows (left column), and the content's padding (bottom row, right column). The
    /// image is first set on an opaque white canvas grown by that padding, then the patch, its
    /// stretchable cells stretched and its fixed cells kept, is laid over the whole canvas.
    /// Identifier `ninepatch:NAME` (`NAME` names the patch, e.g. its URL). Keeps animation frames.
    package struct NinePatch: FrameProcessor {
        /// The nine-patch image (its first frame is used).
        package let patch: Image
        /// Names the patch in the identifier (e.g. its URL).
        package let name: String

        /// A frame drawn with `patch`, named `name`.
        package init(patch: Image, name: String) {
            self.patch = patch
            self.name = name
        }

        /// The stable identifier; see ``ImageProcessing/identifier``.
        package var identifier: String { "ninepatch:\(name)" }

        /// One run of columns (or rows) of the patch's inside with the same stretchiness.
        struct Run: Equatable {
            var start: Int
            var length: Int
            var stretchy: Bool
        }

        /// What the patch's border says: its column and row runs and the content padding.
        struct Layout: Equatable {
            var columns: [Run]
            var rows: [Run]
            var padding: (left: Int, top: Int, right: Int, bottom: Int)

            static func == (a: Layout, b: Layout) -> Bool {
                a.columns == b.columns && a.rows == b.rows && a.padding == b.padding
            }

            /// The layout of a `width` x `height` patch from its RGBA pixels; `nil` unless it is at
            /// least 3 x 3 and marks at least one stretchable column and row.
            init?(rgba: [UInt8], width: Int, height: Int) {
                guard width >= 3, height >= 3, rgba.count >= width * height * 4 else { return nil }
                func marked(_ x: Int, _ y: Int) -> Bool {
                    let i = (y * width + x) * 4
                    return rgba[i] == 0 && rgba[i + 1] == 0 && rgba[i + 2] == 0 && rgba[i + 3] == 255
                }
                func runs(_ count: Int, _ stretchy: (Int) -> Bool) -> [Run] {
                    var result: [Run] = []
                    for index in 1..<(count - 1) {
                        if let last = result.last, last.stretchy == stretchy(index) {
                            result[result.count - 1].length += 1
                        } else {
                            result.append(Run(start: index, length: 1, stretchy: stretchy(index)))
                        }
                    }
                    return result
                }
                columns = runs(width) { marked($0, 0) }
                rows = runs(height) { marked(0, $0) }
                guard columns.contains(where: \.stretchy), rows.contains(where: \.stretchy) else { return nil }
                // The padding: the unmarked pixels before the first and after the last mark of the
                // bottom row and right column (none when they carry no mark).
                let across = (1..<(width - 1)).filter { marked($0, height - 1) }
                let down = (1..<(height - 1)).filter { marked(width - 1, $0) }
                padding = (
                    across.first.map { $0 - 1 } ?? 0, down.first.map { $0 - 1 } ?? 0,
                    across.last.map { width - 2 - $0 } ?? 0, down.last.map { height - 2 - $0 } ?? 0
                )
            }

            /// The sizes the runs take in `total` pixels: fixed runs as they are, stretchable ones
            /// sharing what is left in proportion to their lengths (thumbor's rounding).
            static func sizes(_ runs: [Run], total: Int) -> [Int] {
                let stretchy = runs.filter(\.stretchy).reduce(0) { $0 + $1.length }
                let fixed = runs.reduce(0) { $0 + $1.length } - stretchy
                let share = max(0, total - fixed)
                return runs.map { $0.stretchy ? Int(Double($0.length) / Double(stretchy) * Double(share) + 0.5) : $0.length }
            }
        }

        /// The patch's layout and its first frame's pixels with alpha.
        private func layout() throws(VipsFailure) -> (Layout, VipsImageRef) {
            guard let still = patch.frame(at: 0), let pixels = try? still.rgbaPixels() else {
                throw VipsFailure(message: "\(name): cannot read the patch's pixels")
            }
            guard let layout = Layout(rgba: pixels, width: still.width, height: still.height) else {
                throw VipsFailure(message: "\(name) is not a nine-patch: it needs a stretchable column and row marked in opaque black on its border")
            }
            return (layout, try still.storage.withAlpha())
        }

        func validate(for image: Image) throws(OspreyError) {
            do throws(VipsFailure) {
                _ = try layout()
            } catch {
                throw invalid(error.message)
            }
        }

        func transform(_ frame: VipsImageRef) throws(VipsFailure) -> VipsImageRef {
            let (layout, patchPixels) = try layout()
            let (left, top, right, bottom) = layout.padding
            var canvas = try frame.withAlpha()
            if left > 0 || top > 0 || right > 0 || bottom > 0 {
                let white = [255.0, 255, 255, 255]
                canvas = try canvas.apply { input, out in
                    white.withUnsafeBufferPointer {
                        osprey_embed(
                            input, Int32(left), Int32(top), Int32(frame.width + left + right), Int32(frame.height + top + bottom),
                            $0.baseAddress, 4, &out)
                    }
                }
            }
            var layer = try VipsImageRef.constant(width: canvas.width, height: canvas.height, color: .clear)
            let widths = Layout.sizes(layout.columns, total: canvas.width), heights = Layout.sizes(layout.rows, total: canvas.height)
            var y = 0
            for (row, height) in zip(layout.rows, heights) {
                var x = 0
                for (column, width) in zip(layout.columns, widths) {
                    if width > 0, height > 0, x + width <= canvas.width, y + height <= canvas.height {
                        var cell = try patchPixels.apply {
                            osprey_extract_area($0, Int32(column.start), Int32(row.start), Int32(column.length), Int32(row.length), &$1)
                        }
                        if width != column.length || height != row.length {
                            cell = try cell.apply {
                                osprey_thumbnail_image(
                                    $0, Int32(width), Int32(height), Int32(VIPS_SIZE_FORCE.rawValue), Int32(VIPS_INTERESTING_NONE.rawValue), &$1)
                            }
                        }
                        let placed = cell
                        layer = try layer.apply { osprey_insert($0, placed.pointer, Int32(x), Int32(y), &$1) }
                    }
                    x += width
                }
                y += height
            }
            let framed = try canvas.composite(layer, mode: VIPS_BLEND_MODE_OVER)
            return frame.hasAlpha ? framed : try framed.withoutAlpha()
        }
    }
}
