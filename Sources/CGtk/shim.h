// GTK 4 (pkg-config gtk4, apt libgtk-4-dev), GLib's Unix fd sources, and the two libdispatch entry
// points a foreign run loop uses to drain the main queue (swift-corelibs-foundation's CFRunLoop
// uses the same pair; libdispatch exports them but declares them only in its private headers).
#include <gtk/gtk.h>
#include <glib-unix.h>

/// The eventfd libdispatch writes to when work is queued on the main queue (Linux).
extern int _dispatch_get_main_queue_handle_4CF(void);
/// Runs the work queued on the main queue; call on the main thread.
extern void _dispatch_main_queue_callback_4CF(void *msg);

/// Emits `low-memory-warning` at `level` on `monitor` (g_signal_emit_by_name is variadic, which
/// Swift cannot call): what GIO's monitor does when the system is short of memory.
static inline void osprey_emit_low_memory_warning(GMemoryMonitor *monitor, GMemoryMonitorWarningLevel level) {
    g_signal_emit_by_name(monitor, "low-memory-warning", level);
}
