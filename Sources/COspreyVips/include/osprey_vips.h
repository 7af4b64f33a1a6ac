// Fixed-argument wrappers around libvips' varargs entry points.
//
// Swift cannot call C varargs functions, and libvips passes every optional argument as a
// NULL-terminated name/value list. Each wrapper here fixes one call shape. Every function
// returns 0 on success and -1 on failure (the libvips error buffer then says why), and never
// takes ownership of its inputs: outputs carry their own reference that the caller unrefs.
#ifndef OSPREY_VIPS_H
#define OSPREY_VIPS_H

#include <stddef.h>
#include <vips/vips.h>

/// Initialises libvips once and disables its operation cache. Returns 0 on success. libvips'
/// loadable modules are left for osprey_vips_load_module_for unless the user set VIPSHOME.
/// With a liborc whose JIT code frees race its allocations (osprey_orc_frees_unlocked), libvips'
/// vector (orc) paths stay on only when Osprey's serialised compile and free are the ones
/// libvips calls (osprey_orc_serialised); otherwise they are turned off.
int osprey_vips_init(void);

/// 1 when libvips' calls to liborc's orc_program_compile and orc_program_free reach Osprey's
/// definitions of them (osprey_orc.c), which serialise the two on one mutex, else 0.
int osprey_orc_serialised(void);

/// The version of the liborc loaded with libvips ("0.4.33"), or NULL when there is none.
const char *osprey_orc_version(void);

/// 1 when liborc `version` frees JIT code without the lock its allocator takes (before 0.4.34,
/// fixed upstream by "orccodemem: Fix for potential race in codemem alloc/free"), else 0,
/// also for a version it cannot read.
int osprey_orc_frees_unlocked(const char *version);

/// 1 when libvips runs its vector (orc) paths, else 0.
int osprey_vips_vectors_enabled(void);

/// Loads the libvips module that provides `operation` (heif for `heif…`, magick for `magick…`,
/// jxl for `jxl…`, poppler for `pdf…`; nothing for the rest) if osprey_vips_init left it unloaded and it was not tried yet; safe to
/// call from any thread, after osprey_vips_init. Without the module file nothing happens: its
/// operations stay missing.
void osprey_vips_load_module_for(const char *operation);

/// Loads a header (lazily) from memory. `options` is a libvips option string such as
/// "n=-1,fail_on=truncated" (may be NULL). The buffer must outlive the image's use.
int osprey_load_buffer(const void *buf, size_t len, const char *options, VipsImage **out);

/// Renders an SVG from memory with librsvg at `scale` times its declared size (72 dpi), with
/// libvips' `unlimited` off. `sequential`: VIPS_ACCESS_SEQUENTIAL, else random access.
int osprey_svgload(const void *buf, size_t len, double scale, int sequential, VipsImage **out);
/// Renders the first page of a PDF from memory with poppler at `scale` times its size in points
/// (72 dpi), loading libvips' poppler module first.
int osprey_pdfload(const void *buf, size_t len, double scale, int sequential, VipsImage **out);

/// Loads with shrink-on-load to fit `width` x `height` (`size`: a VipsSize value; `crop`: a
/// VipsInteresting value, VIPS_INTERESTING_NONE to keep the whole image).
int osprey_thumbnail_buffer(const void *buf, size_t len, int width, int height, int size, int crop,
                            int no_rotate, const char *options, VipsImage **out);

/// Resizes a decoded image to `width` x `height` (`size`: VipsSize; `crop`: VipsInteresting,
/// VIPS_INTERESTING_NONE to keep the whole image).
int osprey_thumbnail_image(VipsImage *in, int width, int height, int size, int crop, VipsImage **out);
/// `vips_smartcrop` with the attention measure: a `width` x `height` area, no resize.
int osprey_smartcrop(VipsImage *in, int width, int height, VipsImage **out);

int osprey_autorot(VipsImage *in, VipsImage **out);

/// vips_image_copy_memory() evaluated on the calling thread (strips, top to bottom) instead of
/// libvips' thread pool.
int osprey_copy_memory_inline(VipsImage *in, VipsImage **out);
/// osprey_copy_memory_inline's copy of an image whose alpha band (uchar or ushort) is at its
/// maximum everywhere: 1 with `*out` set; 0 (nothing kept) as soon as a line has transparency, or
/// without such a band; -1 on failure.
int osprey_copy_memory_if_opaque(VipsImage *in, VipsImage **out);
/// `in`'s pixels held in memory, as a new reference: `in` itself when they already are (a memory
/// buffer or a mapped file), else osprey_copy_memory_inline's copy.
int osprey_pixels_in_memory(VipsImage *in, VipsImage **out);
/// Converts through the embedded ICC profile to sRGB, 8 bits.
int osprey_icc_to_srgb(VipsImage *in, VipsImage **out);
/// Converts an 8-bit RGB(A) image with an embedded profile, or an 8-bit CMYK(A) image with an
/// embedded or libvips' fallback profile, to 8-bit sRGB(A) in memory with an lcms2 transform
/// cached per profile (rendered on the calling thread). The output carries no ICC profile.
/// Returns 0 on success, -1 on failure, 1 when the image is not such an image (the caller then
/// uses osprey_icc_to_srgb or vips_colourspace).
int osprey_icc_to_srgb_cached(VipsImage *in, VipsImage **out);
int osprey_colourspace(VipsImage *in, int space, VipsImage **out);
int osprey_cast(VipsImage *in, int format, VipsImage **out);
int osprey_copy(VipsImage *in, VipsImage **out);
/// A copy that shares pixels but is tagged with another interpretation (e.g. multiband → sRGB).
int osprey_retag(VipsImage *in, int interpretation, VipsImage **out);
int osprey_extract_area(VipsImage *in, int left, int top, int width, int height, VipsImage **out);
int osprey_extract_bands(VipsImage *in, int band, int n, VipsImage **out);
int osprey_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out);
int osprey_bandjoin2(VipsImage *a, VipsImage *b, VipsImage **out);
int osprey_bandjoin_const1(VipsImage *in, double c, VipsImage **out);
/// Pads the image into a `width` x `height` canvas at (`x`, `y`) filled with `background`.
int osprey_embed(VipsImage *in, int x, int y, int width, int height,
                 const double *background, int n, VipsImage **out);
int osprey_flatten(VipsImage *in, const double *background, int n, VipsImage **out);
int osprey_gaussblur(VipsImage *in, double sigma, VipsImage **out);
int osprey_sharpen(VipsImage *in, double sigma, VipsImage **out);
int osprey_flip(VipsImage *in, int direction, VipsImage **out);
int osprey_rot(VipsImage *in, int angle, VipsImage **out);
/// out = in * a + b, per band (`n` values each, or 1 for all bands).
int osprey_linear(VipsImage *in, const double *a, const double *b, int n, int uchar, VipsImage **out);
int osprey_add(VipsImage *left, VipsImage *right, VipsImage **out);
/// Places `sub` into `main` at (`x`, `y`).
int osprey_insert(VipsImage *main, VipsImage *sub, int x, int y, VipsImage **out);
int osprey_multiply(VipsImage *left, VipsImage *right, VipsImage **out);
int osprey_composite2(VipsImage *base, VipsImage *overlay, int mode, VipsImage **out);
int osprey_moreeq_const1(VipsImage *in, double c, VipsImage **out);
/// A `width` x `height` image of `bands` uchar bands, every pixel `value`.
int osprey_constant(int width, int height, const double *value, int bands, VipsImage **out);
/// The value below which `percent` of band `band`'s pixels fall (50: the band's median).
int osprey_band_percent(VipsImage *in, int band, double percent, int *threshold);
/// `in` repeated `across` x `down` times.
int osprey_replicate(VipsImage *in, int across, int down, VipsImage **out);
/// Maps each band of `in` through the matching band of `lut` (a 256 x 1 uchar image).
int osprey_maplut(VipsImage *in, VipsImage *lut, VipsImage **out);
/// The histogram of each band of a uchar image: 256 x 1, one uint band per input band.
int osprey_hist_find(VipsImage *in, VipsImage **out);
/// Convolution with a `columns` x `rows` kernel (row by row, used as given: no scale or
/// offset), in floating point; edges repeat the border pixels.
int osprey_conv(VipsImage *in, const double *kernel, int columns, int rows, VipsImage **out);
/// Fills `out` with `count` offsets `random() % amount - amount / 2` of glibc's random() seeded
/// with `seed` (its own state, not the process's: thumbor's noise filter, value for value).
/// Returns 0, or -1 when `amount` is outside 1...255.
int osprey_noise_offsets(unsigned int seed, int amount, signed char *out, size_t count);
/// `in` at `width` x `height`, at (0, 0), the new pixels mirroring the image.
int osprey_embed_mirror(VipsImage *in, int width, int height, VipsImage **out);
/// Box-shrinks by whole `factor`s (each output pixel the mean of a block).
int osprey_shrink(VipsImage *in, double xfactor, double yfactor, VipsImage **out);
/// Enlarges by whole factors, repeating each pixel.
int osprey_zoom(VipsImage *in, int xfactor, int yfactor, VipsImage **out);
/// Each pixel's bands multiplied by a `rows` x `columns` matrix (row by row): `rows` bands out.
int osprey_recomb(VipsImage *in, const double *matrix, int rows, int columns, VipsImage **out);
/// Each value raised to the power `exponent`, in floating point.
int osprey_pow_const1(VipsImage *in, double exponent, VipsImage **out);
int osprey_draw_rect(VipsImage *image, double ink, int left, int top, int width, int height);
int osprey_draw_circle(VipsImage *image, double ink, int cx, int cy, int radius);

int osprey_jpegsave(VipsImage *in, int quality, void **buf, size_t *len);
/// vips_jpegsave_buffer with `interlace`: a progressive JPEG (SOF2, libjpeg's standard scan
/// script), metadata stripped.
int osprey_jpegsave_interlaced(VipsImage *in, int quality, void **buf, size_t *len);
int osprey_pngsave(VipsImage *in, int compression, void **buf, size_t *len);
int osprey_webpsave(VipsImage *in, int quality, int lossless, void **buf, size_t *len);
int osprey_gifsave(VipsImage *in, void **buf, size_t *len);
int osprey_avifsave(VipsImage *in, int quality, void **buf, size_t *len);
/// vips_jxlsave_buffer: lossy at `quality` (libjxl's distance from libvips' Q), or lossless when
/// `lossless`; `effort` 3 (fastest) ... 9 (smallest). Metadata stripped.
int osprey_jxlsave(VipsImage *in, int quality, int lossless, int effort, void **buf, size_t *len);

/// Integer-array metadata (e.g. "delay"); returns the count or -1 when absent.
int osprey_get_int_array(VipsImage *image, const char *name, int **out);
void osprey_set_int_array(VipsImage *image, const char *name, const int *values, int n);
/// Whether a named operation (e.g. "heifsave_buffer") exists in this libvips build, after
/// loading the module that provides it (osprey_vips_load_module_for).
int osprey_has_operation(const char *name);

#endif
