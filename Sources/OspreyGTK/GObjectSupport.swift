import CGtk

/// Small typed helpers over GObject's C API (casts that GTK's C macros do).
enum GObjectSupport {
    /// `G_OBJECT(pointer)`.
    static func object(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutablePointer<GObject> {
        pointer.assumingMemoryBound(to: GObject.self)
    }

    /// `GTK_WIDGET(pointer)`.
    static func widget(_ pointer: OpaquePointer) -> UnsafeMutablePointer<GtkWidget> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GtkWidget.self)
    }

    /// `g_signal_connect(instance, signal, handler, data)`.
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback, _ data: UnsafeMutableRawPointer?) -> gulong {
        g_signal_connect_data(instance, signal, handler, data, nil, GConnectFlags(rawValue: 0))
    }
}

/// `GTK_WINDOW(widget)`: a window made by `gtk_window_new` as the `GtkWindow *` its functions take.
public func GtkWindowPointer(_ widget: UnsafeMutablePointer<GtkWidget>) -> UnsafeMutablePointer<GtkWindow> {
    UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GtkWindow.self)
}
