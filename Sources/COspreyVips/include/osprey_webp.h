// WebP encoding of still images with libwebp, on the calling thread. Same conventions as
// osprey_vips.h: 0 on success, -1 on failure (libvips' error buffer says why), inputs are never
// taken over.
#ifndef OSPREY_WEBP_H
#define OSPREY_WEBP_H

#include <stddef.h>
#include <vips/vips.h>

/// Encodes a still image (all of `in`, one frame) as WebP with the settings vips_webpsave uses by
/// default: lossy at `quality` with libwebp's default preset, method (effort) 4 and alpha at
/// quality 100, or lossless when `lossless` is set. Greyscale becomes RGB; 8-bit sRGB (1 to 4
/// bands) only. No metadata chunks (ICC, EXIF, XMP) are written. `*buf` (`*len` bytes) is
/// allocated with g_malloc.
int osprey_webpsave_still(VipsImage *in, int quality, int lossless, void **buf, size_t *len);

/// The canvas size a WebP file declares in its headers (the VP8/VP8L frame header, or the VP8X
/// canvas), read by libwebp without decoding anything. 0 on success, -1 when the headers are not
/// WebP's (no libvips error is set).
int osprey_webp_declared_size(const void *buf, size_t len, int *width, int *height);

#endif
