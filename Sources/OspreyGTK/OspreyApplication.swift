import CGtk
import Osprey

/// A shorter start for a GTK program without a `GtkApplication`: GTK initialised, the main actor on
/// GLib's loop (``GLibMainActor/install()``), pipelines that decode below the main thread's
/// priority, and the loop run until ``quit()``. Not needed under `g_application_run`: Osprey's
/// widgets install the main actor themselves.
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

    /// Initialises GTK (`gtk_init`), installs ``GLibMainActor`` and sets
    /// `ImagePipeline.Configuration.defaultProcessingThreadNice` to `processingThreadNice`
    /// (default 10; `nil` leaves it as it is): pipelines made afterwards, `ImagePipeline.shared`
    /// included, decode and process on threads of their own at that nice value, below the main
    /// thread's, so that decoding never delays a frame. Call first, on the main thread, before
    /// making pipelines. GIO's memory, network and power monitors are wired to
    /// `ImagePipeline.shared` (``monitorSystem(for:)``).
    public static func initialize(processingThreadNice: Int32? = 10) {
        if let processingThreadNice { ImagePipeline.Configuration.defaultProcessingThreadNice = processingThreadNice }
        gtk_init()
        GLibMainActor.install()
        monitorSystem(for: .shared)
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
