#include "osprey_vips.h"
#include <string.h>

static void osprey_quiet_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

int osprey_vips_init(void) {
    if (VIPS_INIT("osprey") != 0) return -1;
    // libvips prints warnings (e.g. "ignoring nclx profile") to stderr; failures still surface as
    // errors through the error buffer, so warnings are dropped unless OSPREY_VIPS_WARNINGS is set.
    if (!g_getenv("OSPREY_VIPS_WARNINGS")) {
        g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, osprey_quiet_log, NULL);
    }
    // Osprey caches images itself; libvips' operation cache would only hold memory.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    return 0;
}

int osprey_load_buffer(const void *buf, size_t len, const char *options, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, options ? options : "", NULL);
    return *out ? 0 : -1;
}

int osprey_thumbnail_buffer(const void *buf, size_t len, int width, int height, int size,
                            int no_rotate, const char *options, VipsImage **out) {
    return vips_thumbnail_buffer((void *)buf, len, out, width,
                                 "height", height,
                                 "size", size,
                                 "no_rotate", no_rotate ? TRUE : FALSE,
                                 "option_string", options ? options : "",
                                 NULL);
}

int osprey_thumbnail_image(VipsImage *in, int width, int height, int size, int crop, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop,
                                "no_rotate", TRUE, NULL);
}

int osprey_autorot(VipsImage *in, VipsImage **out) { return vips_autorot(in, out, NULL); }

int osprey_icc_to_srgb(VipsImage *in, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "depth", 8, NULL);
}

int osprey_colourspace(VipsImage *in, int space, VipsImage **out) {
    return vips_colourspace(in, out, (VipsInterpretation)space, NULL);
}

int osprey_cast(VipsImage *in, int format, VipsImage **out) {
    return vips_cast(in, out, (VipsBandFormat)format, NULL);
}

int osprey_copy(VipsImage *in, VipsImage **out) { return vips_copy(in, out, NULL); }

int osprey_retag(VipsImage *in, int interpretation, VipsImage **out) {
    return vips_copy(in, out, "interpretation", (VipsInterpretation)interpretation, NULL);
}

int osprey_extract_area(VipsImage *in, int left, int top, int width, int height, VipsImage **out) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int osprey_extract_bands(VipsImage *in, int band, int n, VipsImage **out) {
    return vips_extract_band(in, out, band, "n", n, NULL);
}

int osprey_arrayjoin_vertical(VipsImage **in, int n, VipsImage **out) {
    return vips_arrayjoin(in, out, n, "across", 1, NULL);
}

int osprey_bandjoin2(VipsImage *a, VipsImage *b, VipsImage **out) {
    return vips_bandjoin2(a, b, out, NULL);
}

int osprey_bandjoin_const1(VipsImage *in, double c, VipsImage **out) {
    return vips_bandjoin_const1(in, out, c, NULL);
}

int osprey_embed(VipsImage *in, int x, int y, int width, int height,
                 const double *background, int n, VipsImage **out) {
    VipsArrayDouble *bg = vips_array_double_new(background, n);
    int r = vips_embed(in, out, x, y, width, height,
                       "extend", VIPS_EXTEND_BACKGROUND, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return r;
}

int osprey_flatten(VipsImage *in, const double *background, int n, VipsImage **out) {
    VipsArrayDouble *bg = vips_array_double_new(background, n);
    int r = vips_flatten(in, out, "background", bg, NULL);
    vips_area_unref(VIPS_AREA(bg));
    return r;
}

int osprey_gaussblur(VipsImage *in, double sigma, VipsImage **out) {
    return vips_gaussblur(in, out, sigma, NULL);
}

int osprey_sharpen(VipsImage *in, double sigma, VipsImage **out) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

int osprey_flip(VipsImage *in, int direction, VipsImage **out) {
    return vips_flip(in, out, (VipsDirection)direction, NULL);
}

int osprey_rot(VipsImage *in, int angle, VipsImage **out) {
    return vips_rot(in, out, (VipsAngle)angle, NULL);
}

int osprey_linear(VipsImage *in, const double *a, const double *b, int n, int uchar, VipsImage **out) {
    return vips_linear(in, out, (double *)a, (double *)b, n, "uchar", uchar ? TRUE : FALSE, NULL);
}

int osprey_add(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_add(left, right, out, NULL);
}

int osprey_insert(VipsImage *main, VipsImage *sub, int x, int y, VipsImage **out) {
    return vips_insert(main, sub, out, x, y, NULL);
}

int osprey_multiply(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_multiply(left, right, out, NULL);
}

int osprey_composite2(VipsImage *base, VipsImage *overlay, int mode, VipsImage **out) {
    return vips_composite2(base, overlay, out, (VipsBlendMode)mode, NULL);
}

int osprey_moreeq_const1(VipsImage *in, double c, VipsImage **out) {
    return vips_moreeq_const1(in, out, c, NULL);
}

int osprey_constant(int width, int height, const double *value, int bands, VipsImage **out) {
    VipsImage *black = NULL;
    if (vips_black(&black, width, height, "bands", bands, NULL) != 0) return -1;
    double zeros[8] = {0};
    int r = vips_linear(black, out, zeros, (double *)value, bands, "uchar", TRUE, NULL);
    g_object_unref(black);
    return r;
}

int osprey_draw_rect(VipsImage *image, double ink, int left, int top, int width, int height) {
    return vips_draw_rect1(image, ink, left, top, width, height, "fill", TRUE, NULL);
}

int osprey_draw_circle(VipsImage *image, double ink, int cx, int cy, int radius) {
    return vips_draw_circle1(image, ink, cx, cy, radius, "fill", TRUE, NULL);
}

int osprey_jpegsave(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, NULL);
}

int osprey_pngsave(VipsImage *in, int compression, void **buf, size_t *len) {
    return vips_pngsave_buffer(in, buf, len, "compression", compression, "strip", TRUE, NULL);
}

int osprey_webpsave(VipsImage *in, int quality, int lossless, void **buf, size_t *len) {
    return vips_webpsave_buffer(in, buf, len, "Q", quality, "lossless", lossless ? TRUE : FALSE,
                                "strip", TRUE, NULL);
}

int osprey_gifsave(VipsImage *in, void **buf, size_t *len) {
    return vips_gifsave_buffer(in, buf, len, "strip", TRUE, NULL);
}

int osprey_avifsave(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_heifsave_buffer(in, buf, len, "Q", quality,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "strip", TRUE, NULL);
}

int osprey_get_int_array(VipsImage *image, const char *name, int **out) {
    int n = 0;
    if (vips_image_get_typeof(image, name) == 0) return -1;
    if (vips_image_get_array_int(image, name, out, &n) != 0) return -1;
    return n;
}

void osprey_set_int_array(VipsImage *image, const char *name, const int *values, int n) {
    vips_image_set_array_int(image, name, values, n);
}

int osprey_has_operation(const char *name) {
    return vips_type_find("VipsOperation", name) != 0;
}

int osprey_copy_memory_inline(VipsImage *in, VipsImage **out) {
    // Same result as vips_image_copy_memory(), but the pipeline is evaluated on the calling
    // thread, a strip at a time, top to bottom (so sequential loaders are read in order), instead
    // of through libvips' thread pool: for small images the hand-offs to and from the pool's
    // worker threads cost more than the pixels.
    *out = NULL;
    VipsImage *mem = vips_image_new_memory();
    if (!mem) return -1;
    if (vips_image_pipelinev(mem, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) ||
        vips_image_write_prepare(mem)) {
        g_object_unref(mem);
        return -1;
    }
    VipsRegion *region = vips_region_new(in);
    if (!region) {
        g_object_unref(mem);
        return -1;
    }
    const size_t line = VIPS_IMAGE_SIZEOF_LINE(in);
    const int strip = 64;
    for (int top = 0; top < in->Ysize; top += strip) {
        VipsRect rect = { 0, top, in->Xsize, VIPS_MIN(strip, in->Ysize - top) };
        if (vips_region_prepare(region, &rect)) {
            g_object_unref(region);
            g_object_unref(mem);
            return -1;
        }
        for (int y = 0; y < rect.height; y++) {
            memcpy(VIPS_IMAGE_ADDR(mem, 0, top + y), VIPS_REGION_ADDR(region, 0, top + y), line);
        }
    }
    g_object_unref(region);
    *out = mem;
    return 0;
}
