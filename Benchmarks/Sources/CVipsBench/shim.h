#include <vips/vips.h>

/* Stock libvips for scenarios 8 and 9's baselines, as imgproxy runs it. Swift cannot call C varargs
   functions, so these fix the arguments. Each returns 0 on success (libvips' convention) and
   clears libvips' error buffer on failure. */

/* vips_thumbnail_buffer(buf, len, &out, width, "height", height, NULL): shrink-on-load into a
   width x height box, keeping the aspect ratio. */
static inline int osprey_bench_thumbnail_buffer(const void *buf, size_t len, VipsImage **out, int width, int height) {
    int failed = vips_thumbnail_buffer((void *) buf, len, out, width, "height", height, NULL);
    if (failed) vips_error_clear();
    return failed;
}

/* vips_jpegsave_buffer(image, &buf, &len, "Q", quality, NULL); free *buf with osprey_bench_free. */
static inline int osprey_bench_jpegsave_buffer(VipsImage *image, void **buf, size_t *len, int quality) {
    int failed = vips_jpegsave_buffer(image, buf, len, "Q", quality, NULL);
    if (failed) vips_error_clear();
    return failed;
}

/* vips_thumbnail_buffer(buf, len, &out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL): as
   above but never enlarging (thumbor's fit-in; scenario 9). */
static inline int osprey_bench_thumbnail_buffer_down(const void *buf, size_t len, VipsImage **out, int width, int height) {
    int failed = vips_thumbnail_buffer((void *) buf, len, out, width, "height", height, "size", VIPS_SIZE_DOWN, NULL);
    if (failed) vips_error_clear();
    return failed;
}

/* vips_webpsave_buffer(image, &buf, &len, "Q", quality, NULL); free *buf with osprey_bench_free. */
static inline int osprey_bench_webpsave_buffer(VipsImage *image, void **buf, size_t *len, int quality) {
    int failed = vips_webpsave_buffer(image, buf, len, "Q", quality, NULL);
    if (failed) vips_error_clear();
    return failed;
}

static inline void osprey_bench_unref(VipsImage *image) { g_object_unref(image); }
static inline void osprey_bench_free(void *buf) { g_free(buf); }
