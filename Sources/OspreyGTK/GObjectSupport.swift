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

    /// Connects `handler` to `signal` of `instance` with a ``WeakReference`` to `owner` as its data:
    /// the handler's closure holds the box (released with the closure), never `owner` itself, so a
    /// handler that runs after `owner` is gone finds `nil`. Returns the handler id.
    @discardableResult
    static func connect<Owner: AnyObject>(
        _ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback, weakly owner: Owner
    ) -> gulong {
        let box = Unmanaged.passRetained(WeakReference(owner)).toOpaque()
        return g_signal_connect_data(
            instance, signal, handler, box, { data, _ in Unmanaged<AnyObject>.fromOpaque(data!).release() }, GConnectFlags(rawValue: 0))
    }

    /// Runs `body` with `owner` once, from an idle callback on GLib's default main context
    /// (`G_PRIORITY_DEFAULT_IDLE`), unless `owner` is gone by then; the callback holds `owner` weakly.
    @MainActor
    static func idle<Owner: AnyObject>(weakly owner: Owner, _ body: @escaping @MainActor (Owner) -> Void) {
        let action = IdleAction { [weak owner] in owner.map(body) }
        g_idle_add_full(
            G_PRIORITY_DEFAULT_IDLE,
            { data in
                MainActor.assumeIsolated { Unmanaged<IdleAction>.fromOpaque(data!).takeUnretainedValue().run() }
                return 0  // G_SOURCE_REMOVE
            }, Unmanaged.passRetained(action).toOpaque(), { data in Unmanaged<IdleAction>.fromOpaque(data!).release() })
    }

    /// The owner behind the data of a handler connected by ``connect(_:_:_:weakly:)``, `nil` once released.
    static func owner<Owner: AnyObject>(_ data: UnsafeMutableRawPointer?, as: Owner.Type) -> Owner? {
        guard let data else { return nil }
        return (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? WeakReference<Owner>)?.value
    }
}

/// A weak reference to a main-actor object, the data GLib handlers of OspreyGTK's widgets hold.
final class WeakReference<Owner: AnyObject> {
    weak var value: Owner?

    init(_ value: Owner) {
        self.value = value
    }
}

/// The closure an idle callback of ``GObjectSupport/idle(weakly:_:)`` runs.
private final class IdleAction {
    let run: @MainActor () -> Void

    init(_ run: @escaping @MainActor () -> Void) {
        self.run = run
    }
}

/// `GTK_WINDOW(widget)`: a window made by `gtk_window_new` as the `GtkWindow *` its functions take.
public func GtkWindowPointer(_ widget: UnsafeMutablePointer<GtkWidget>) -> UnsafeMutablePointer<GtkWindow> {
    UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GtkWindow.self)
}
