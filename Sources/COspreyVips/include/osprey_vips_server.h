// Fixed-argument wrappers for the processors the image proxy server (`osprey serve`) needs.
// Same conventions as osprey_vips.h: 0 on success, -1 on failure (libvips' error buffer says
// why), inputs are never taken over.
#ifndef OSPREY_VIPS_SERVER_H
#define OSPREY_VIPS_SERVER_H

#include <vips/vips.h>

/// The bounding box of what differs from the background by more than `threshold`
/// (vips_find_trim, alpha ignored). The background is `rgb` (3 values; a grey image is compared
/// as grey in all three) when not NULL, else the bottom-right pixel when `bottom_right`, else the
/// top-left one. An image that is all background gives a width or height of 0.
int osprey_find_trim(VipsImage *in, double threshold, const double *rgb, int bottom_right, int *left, int *top, int *width,
                     int *height);

/// glibc's mallopt(M_ARENA_MAX, arenas); 0 where that is not available or refused.
int osprey_malloc_arena_max(int arenas);

/// glibc's mallopt(M_MMAP_THRESHOLD, bytes); 0 where that is not available or refused.
int osprey_malloc_mmap_threshold(int bytes);

/// glibc's malloc_trim(0): 1 when memory went back to the system, 0 otherwise (or elsewhere).
int osprey_malloc_trim(void);

#endif
