import COspreyVips

/// The C allocator's settings for a long-running server (glibc; elsewhere these do nothing).
///
/// glibc gives each thread that allocates an arena of its own, up to eight per core, and returns
/// to the system only the free memory at the top of each: a server whose libvips workers and
/// task threads allocate and free image buffers keeps freed memory scattered over many arenas,
/// and its RSS creeps up well past what it holds.
enum Malloc {
    /// Sets the allocator up for the server: ``limitArenas()``, then allocations of 8 MiB and
    /// more straight from the system (`M_MMAP_THRESHOLD`), so that full-size decodes and large
    /// source bodies go back to it when freed instead of raising glibc's dynamic threshold (up to
    /// 32 MiB) and staying in the arenas. Must run before the server's threads start.
    static func configure() {
        limitArenas()
        // Large source bodies come from mmap and go back to the system when freed.
        _ = osprey_malloc_mmap_threshold(8 << 20)
    }

    /// Caps the arenas at two: memory freed by one thread is reused by the others instead of
    /// sitting in per-thread arenas. glibc counts the cap only for arenas made after it, and
    /// makes one for each new thread that allocates until the cap is reached, so this must run
    /// before the server's threads start.
    private static func limitArenas() {
        _ = osprey_malloc_arena_max(2)
    }

    /// Returns the free pages of every arena to the system; `false` when nothing was released.
    @discardableResult
    static func trim() -> Bool {
        osprey_malloc_trim() != 0
    }
}
