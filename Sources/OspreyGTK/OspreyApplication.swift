import CGtk

/// The few lines every GTK program using Osprey starts with: GTK initialised, the main actor on
/// GLib's loop (``GLibMainActor/install()``), and the loop run until ``quit()``.
///
/// ```swift
/// OspreyApplication.initialize()
/// let window = gtk_window_new()!
/// // … build widgets, call picture.osprey.setImage(with:) …
/// gtk_window_present(GtkWindowPointer(window))
/// OspreyApplication.run()
/// ```
@MainActor
public enum OspreyApplication {
    private static var loop: OpaquePointer?

    /// Initialises GTK (`gtk_init`) and installs ``GLibMainActor``. Call first, on the main thread.
    public static func initialize() {
        gtk_init()
        GLibMainActor.install()
    }

    /// Runs GLib's main loop (the main actor's jobs run in it) until ``quit()``.
    public static func run() {
        GLibMainActor.install()
        let loop = g_main_loop_new(nil, 0)
        self.loop = loop
        g_main_loop_run(loop)
        g_main_loop_unref(loop)
        self.loop = nil
    }

    /// Makes ``run()`` return.
    public static func quit() {
        if let loop { g_main_loop_quit(loop) }
    }
}
