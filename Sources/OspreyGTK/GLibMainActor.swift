import CGtk
import Foundation
import Glibc

/// Runs Swift's main actor inside GLib's main loop.
///
/// A GTK program runs GLib's loop (`g_main_loop_run`, `g_application_run`), which on Linux does not
/// drain libdispatch's main queue, where the main actor's jobs wait: `Task { @MainActor in … }`,
/// `await MainActor.run`, and every image OspreyGTK delivers would never run. ``install()`` adds a
/// GLib source that wakes when libdispatch signals work on its main queue (the eventfd returned by
/// `_dispatch_get_main_queue_handle_4CF`) and drains it there (`_dispatch_main_queue_callback_4CF`),
/// as swift-corelibs-foundation's `RunLoop` does. No polling timer: the loop sleeps until work comes.
///
/// No program has to call it: the first ``OspreyPicture`` or ``ImageGrid`` installs it.
public enum GLibMainActor {
    /// The GLib source id, 0 until installed.
    @MainActor private static var sourceID: guint = 0

    /// Whether the source is installed, or not needed (see ``install()``).
    @MainActor package static var isInstalled: Bool { sourceID != 0 }

    /// Makes the main actor's jobs run on the default GLib main context; later calls do nothing.
    ///
    /// Needs GTK initialised (`gtk_init`, or inside `g_application_run`'s `activate`): without it,
    /// it stops the program with a message saying so, rather than leave every image undelivered.
    /// Off the process's main thread (the main queue is then drained by libdispatch itself, after
    /// `dispatchMain()`, as in an `async` main or a test runner) it installs nothing.
    @MainActor public static func install() {
        guard sourceID == 0 else { return }
        guard gtk_is_initialized() != 0 else {
            fatalError(
                "OspreyGTK: GTK is not initialised. Make Osprey widgets after gtk_init(), or inside the `activate` "
                    + "handler of a GtkApplication run by g_application_run (which initialises GTK).")
        }
        // The main queue belongs to the main thread until dispatchMain(); after it, libdispatch
        // drains it on its own threads and draining it from GLib would crash.
        guard Thread.isMainThread else { return }
        let handle = _dispatch_get_main_queue_handle_4CF()
        sourceID = g_unix_fd_add(
            handle, G_IO_IN,
            { fd, _, _ in
                // Clear the eventfd first, so work queued while draining wakes the loop again.
                var count: UInt64 = 0
                _ = read(fd, &count, MemoryLayout<UInt64>.size)
                _dispatch_main_queue_callback_4CF(nil)
                return 1  // G_SOURCE_CONTINUE
            }, nil)
        // Jobs queued before the handle existed did not signal it: drain once at the loop's start.
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { _ in
                _dispatch_main_queue_callback_4CF(nil)
                return 0  // G_SOURCE_REMOVE
            }, nil, nil)
    }
}
