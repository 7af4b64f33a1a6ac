import CGtk
import Foundation
import OspreyGTK

/// The same `GtkGridView` as `ImageGrid`'s, binding cells without Osprey: solid colours (the
/// floor), textures of the cell size decoded before the clock starts (`decoded`: what drawing the
/// images costs with no loading at all), or `gdk_texture_new_from_bytes` on the main thread (the
/// naive way).
@MainActor
enum PlainGrid {
    typealias Bind = @MainActor (OspreyPicture, Int) -> Void

    nonisolated(unsafe) static var binder: Bind?  // set once before the loop runs, read on the main thread

    static let solidTextures: [Texture] = (0..<8).map { index in
        let pixel: [UInt8] = [UInt8(index * 32), UInt8(255 - index * 32), 128, 255]
        let bytes = pixel.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        return Texture(taking: gdk_memory_texture_new(1, 1, GDK_MEMORY_R8G8B8A8, bytes, 4))
    }

    static let solid: Bind = { picture, index in picture.display(solidTextures[index % solidTextures.count]) }

    /// Cell-sized textures, one per distinct image, by item (`decoded` mode only).
    nonisolated(unsafe) static var decodedTextures: [Texture] = []

    static let decoded: Bind = { picture, index in picture.display(decodedTextures[index]) }

    static let naive: Bind = { picture, index in
        let data = bodies[index]
        let bytes = data.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        var error: UnsafeMutablePointer<GError>?
        if let texture = gdk_texture_new_from_bytes(bytes, &error) { picture.display(Texture(taking: texture)) } else { g_error_free(error) }
    }

    static func make(count: Int, bind: @escaping Bind) -> UnsafeMutablePointer<GtkWidget> {
        binder = bind
        let strings = gtk_string_list_new(nil)!
        for index in 0..<count { gtk_string_list_append(strings, "\(index)") }
        let factory = gtk_signal_list_item_factory_new()!
        typealias Handler = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void
        let setup: Handler = { _, item, _ in
            MainActor.assumeIsolated {
                let picture = OspreyPicture()
                gtk_widget_set_size_request(picture.widget, 200, 150)
                gtk_list_item_set_child(item, picture.widget)
            }
        }
        let bindItem: Handler = { _, item, _ in
            MainActor.assumeIsolated {
                guard let child = gtk_list_item_get_child(item), let picture = OspreyPicture.of(child) else { return }
                PlainGrid.binder?(picture, Int(gtk_list_item_get_position(item)))
            }
        }
        let unbind: Handler = { _, item, _ in
            MainActor.assumeIsolated {
                guard let child = gtk_list_item_get_child(item), let picture = OspreyPicture.of(child) else { return }
                picture.display(nil)
            }
        }
        for (name, handler) in [("setup", setup), ("bind", bindItem), ("unbind", unbind)] {
            g_signal_connect_data(
                UnsafeMutableRawPointer(factory), name, unsafeBitCast(handler, to: GCallback.self), nil, nil, GConnectFlags(rawValue: 0))
        }
        let gridView = gtk_grid_view_new(gtk_no_selection_new(strings), factory)!
        gtk_grid_view_set_max_columns(OpaquePointer(gridView), 16)
        let scroller = gtk_scrolled_window_new()!
        gtk_scrolled_window_set_child(OpaquePointer(scroller), gridView)
        return scroller
    }
}
