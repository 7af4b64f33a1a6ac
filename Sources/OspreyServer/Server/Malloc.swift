import COspreyVips

/// The C allocator's settings for a long-running server (glibc; elsewhere these do nothing).
///
/// glibc gives each thread that allocates an arena of its own, up to eight per core, and returns
/// to the system only the free memory at the top of each: a server whose libvips workers and
/// task threads allocate and free image buffers keeps freed memory scattered over many arenas,
/// and its RSS creeps up well past what it holds.
enum Malloc {
    /// The size from which a block gets a mapping of its own, given back to the system when freed.
    static let mmapThreshold = 1 << 20

    /// Caps the arenas at two: memory freed by one thread is reused by the others instead of
    /// sitting in per-thread arenas.
    static func limitArenas() {
        _ = osprey_malloc_arena_max(2)
    }

    /// Fixes the mapping threshold at ``mmapThreshold``. Left to itself, glibc raises it to the
    /// size of each mapped block freed (up to 32 MiB, and the trim threshold to twice that): after
    /// one multi-megabyte body or decode, every later block of that size lands in the arenas,
    /// which keep it once freed, and RSS climbs in steps under a mixed load.
    static func fixMmapThreshold() {
        _ = osprey_malloc_mmap_threshold(Int32(mmapThreshold))
    }

    /// Whether glibc gave `block` (from `malloc`) a mapping of its own; `false` elsewhere.
    static func isMapped(_ block: UnsafeRawPointer) -> Bool {
        osprey_malloc_is_mapped(block) != 0
    }

    /// Returns the free pages of every arena to the system; `false` when nothing was released.
    @discardableResult
    static func trim() -> Bool {
        osprey_malloc_trim() != 0
    }
}
