import CGtk

/// What a widget shows, rendered by its window's renderer into a texture: for screenshots and
/// for tests that assert on the pixels on screen (`gtk_widget_paintable_new` →
/// `gsk_renderer_render_texture` → `gdk_texture_download`).
@MainActor
public enum WidgetSnapshot {
    /// Renders `widget` (mapped, in a realised window) at its allocated size; `nil` when it has
    /// no size or no renderer yet.
    public static func texture(of widget: UnsafeMutablePointer<GtkWidget>) -> Texture? {
        let width = gtk_widget_get_width(widget)
        let height = gtk_widget_get_height(widget)
        guard width > 0, height > 0, let native = gtk_widget_get_native(widget), let renderer = gtk_native_get_renderer(native) else {
            return nil
        }
        let paintable = gtk_widget_paintable_new(widget)!
        defer { g_object_unref(UnsafeMutableRawPointer(paintable)) }
        let snapshot = gtk_snapshot_new()!
        gdk_paintable_snapshot(paintable, snapshot, Double(width), Double(height))
        guard let node = gtk_snapshot_free_to_node(snapshot) else { return nil }
        defer { gsk_render_node_unref(node) }
        var viewport = graphene_rect_t(origin: graphene_point_t(x: 0, y: 0), size: graphene_size_t(width: Float(width), height: Float(height)))
        guard let texture = gsk_renderer_render_texture(renderer, node, &viewport) else { return nil }
        return Texture(taking: texture)
    }

    /// Writes `widget` as a PNG at `path`; returns whether it could.
    public static func savePNG(of widget: UnsafeMutablePointer<GtkWidget>, to path: String) -> Bool {
        guard let texture = texture(of: widget) else { return false }
        return gdk_texture_save_to_png(texture.pointer, path) != 0
    }

    /// The pixels of `texture` as 8-bit RGBA, row by row (`width * height * 4` bytes).
    public static func rgba(of texture: Texture) -> [UInt8] {
        let stride = texture.width * 4
        var bgra = [UInt8](repeating: 0, count: stride * texture.height)
        bgra.withUnsafeMutableBytes { gdk_texture_download(texture.pointer, $0.baseAddress, gsize(stride)) }
        // gdk_texture_download writes premultiplied B8G8R8A8 (cairo's ARGB32 on little-endian).
        var rgba = [UInt8](repeating: 0, count: bgra.count)
        for offset in Swift.stride(from: 0, to: bgra.count, by: 4) {
            let alpha = Int(bgra[offset + 3])
            let unpremultiply: (UInt8) -> UInt8 = { alpha == 0 ? 0 : UInt8(min(255, Int($0) * 255 / alpha)) }
            rgba[offset] = unpremultiply(bgra[offset + 2])
            rgba[offset + 1] = unpremultiply(bgra[offset + 1])
            rgba[offset + 2] = unpremultiply(bgra[offset])
            rgba[offset + 3] = UInt8(alpha)
        }
        return rgba
    }

    /// The bounds of `widget` in `ancestor`'s coordinates (x, y, width, height), or `nil`.
    public static func bounds(of widget: UnsafeMutablePointer<GtkWidget>, in ancestor: UnsafeMutablePointer<GtkWidget>) -> (
        x: Double, y: Double, width: Double, height: Double
    )? {
        var rect = graphene_rect_t()
        guard gtk_widget_compute_bounds(widget, ancestor, &rect) != 0 else { return nil }
        return (Double(rect.origin.x), Double(rect.origin.y), Double(rect.size.width), Double(rect.size.height))
    }
}
