// JPEG encoding with libjpeg(-turbo), on the calling thread. Same conventions as osprey_vips.h:
// 0 on success, -1 on failure (libvips' error buffer says why), inputs are never taken over.
#ifndef OSPREY_JPEG_H
#define OSPREY_JPEG_H

#include <stddef.h>
#include <vips/vips.h>

/// Encodes `in` (8-bit, 1 band grey or 3 bands RGB, one frame) as a baseline JPEG with the
/// settings vips_jpegsave uses with `strip`: libjpeg's defaults at `quality`, standard Huffman
/// tables, 4:2:0 chroma below quality 90 and none from 90, and no JFIF, EXIF, ICC or XMP markers.
/// The bytes are the same as vips_jpegsave_buffer's. Pixels not yet in memory are rendered on the
/// calling thread. `*buf` (`*len` bytes) is allocated with g_malloc.
int osprey_jpegsave_still(VipsImage *in, int quality, void **buf, size_t *len);

#endif
