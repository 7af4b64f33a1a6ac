// Incremental decoding of one progressive JPEG as its bytes arrive, with libjpeg(-turbo)'s
// buffered-image mode (libjpeg.txt, "Buffered-image mode"): every scan is entropy-decoded once,
// into the decoder's coefficient buffer, and each preview is one output pass over that buffer.
// Decoding each preview from its prefix instead decodes every earlier scan again, and for a
// 4000 x 3000 photo three previews then cost more than the final decode.
// Conventions as osprey_vips.h: 0 on success, -1 on failure (libvips' error buffer says why).
// A decoder is used by one thread at a time.
#ifndef OSPREY_JPEG_PROGRESSIVE_H
#define OSPREY_JPEG_PROGRESSIVE_H

#include <stddef.h>
#include <vips/vips.h>

typedef struct osprey_jpeg_progressive osprey_jpeg_progressive;

/// A decoder for one progressive JPEG, rendering at 1/`scale_denom` of its size (1, 2, 4 or 8,
/// libjpeg's DCT scaling, the sizes libvips' `shrink` load option gives). NULL when out of memory.
osprey_jpeg_progressive *osprey_jpeg_progressive_new(int scale_denom);

/// Frees the decoder and its coefficient buffer.
void osprey_jpeg_progressive_free(osprey_jpeg_progressive *decoder);

/// Appends `len` bytes of the file (copied; the first call starts at the file's first byte) and
/// decodes as far as they go. Fails for damaged data, a baseline (not progressive) JPEG, or
/// colour other than greyscale or YCbCr/RGB (CMYK is left to libvips, which knows Adobe's
/// inverted CMYK); after a failure every call fails.
int osprey_jpeg_progressive_append(osprey_jpeg_progressive *decoder, const void *bytes, size_t len);

/// Copies `like`'s ICC profile and EXIF orientation (the file's header, as libvips read it) into
/// the decoder, for the images it renders; `like` is not kept.
void osprey_jpeg_progressive_keep_metadata(osprey_jpeg_progressive *decoder, VipsImage *like);

/// The scans decoded so far as a new 8-bit image in memory (3 bands sRGB or 1 band B_W). `*out` is
/// NULL, and 0 returned, while no scan is complete yet, or when no scan has completed since the
/// last render.
int osprey_jpeg_progressive_render(osprey_jpeg_progressive *decoder, VipsImage **out);

/// The number of the last scan whose data has all been decoded (0 before the first).
int osprey_jpeg_progressive_scans(osprey_jpeg_progressive *decoder);

#endif
