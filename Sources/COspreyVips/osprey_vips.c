#include <pthread.h>
#include "osprey_vips.h"
#include "osprey_render.h"
#include <string.h>
#include <lcms2.h>

int osprey_load_buffer(const void *buf, size_t len, const char *options, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, options ? options : "", NULL);
    return *out ? 0 : -1;
}

int osprey_svgload(const void *buf, size_t len, double scale, int sequential, VipsImage **out) {
    // `unlimited` stays off: librsvg keeps its limits on XML size and nesting. librsvg itself
    // loads no resource from outside a document loaded from memory (no base file: only data:
    // URLs resolve), and runs no script.
    return vips_svgload_buffer((void *)buf, len, out, "scale", scale, "unlimited", FALSE,
                               "fail_on", VIPS_FAIL_ON_TRUNCATED,
                               "access", sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM, NULL);
}

int osprey_pdfload(const void *buf, size_t len, double scale, int sequential, VipsImage **out) {
    osprey_vips_load_module_for("pdfload_buffer");
    return vips_pdfload_buffer((void *)buf, len, out, "page", 0, "n", 1, "scale", scale,
                               "fail_on", VIPS_FAIL_ON_TRUNCATED,
                               "access", sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM, NULL);
}

int osprey_thumbnail_buffer(const void *buf, size_t len, int width, int height, int size, int crop,
                            int no_rotate, const char *options, VipsImage **out) {
    return vips_thumbnail_buffer((void *)buf, len, out, width,
                                 "height", height,
                                 "size", size,
                                 "crop", crop,
                                 "no_rotate", no_rotate ? TRUE : FALSE,
                                 "option_string", options ? options : "",
                                 NULL);
}

int osprey_thumbnail_image(VipsImage *in, int width, int height, int size, int crop, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", size, "crop", crop,
                                "no_rotate", TRUE, NULL);
}

int osprey_smartcrop(VipsImage *in, int width, int height, VipsImage **out) {
    return vips_smartcrop(in, out, width, height, "interesting", VIPS_INTERESTING_ATTENTION, NULL);
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

int osprey_band_percent(VipsImage *in, int band, double percent, int *threshold) {
    VipsImage *one = NULL;
    if (vips_extract_band(in, &one, band, NULL)) return -1;
    int r = vips_percent(one, percent, threshold, NULL);
    g_object_unref(one);
    return r;
}

int osprey_replicate(VipsImage *in, int across, int down, VipsImage **out) {
    return vips_replicate(in, out, across, down, NULL);
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

int osprey_maplut(VipsImage *in, VipsImage *lut, VipsImage **out) {
    return vips_maplut(in, out, lut, NULL);
}

int osprey_hist_find(VipsImage *in, VipsImage **out) {
    return vips_hist_find(in, out, NULL);
}

int osprey_conv(VipsImage *in, const double *kernel, int columns, int rows, VipsImage **out) {
    VipsImage *mask = vips_image_new_matrix_from_array(columns, rows, kernel, columns * rows);
    if (mask == NULL) return -1;
    int r = vips_conv(in, out, mask, "precision", VIPS_PRECISION_FLOAT, NULL);
    g_object_unref(mask);
    return r;
}

int osprey_embed_mirror(VipsImage *in, int width, int height, VipsImage **out) {
    return vips_embed(in, out, 0, 0, width, height, "extend", VIPS_EXTEND_MIRROR, NULL);
}

int osprey_shrink(VipsImage *in, double xfactor, double yfactor, VipsImage **out) {
    return vips_shrink(in, out, xfactor, yfactor, NULL);
}

int osprey_zoom(VipsImage *in, int xfactor, int yfactor, VipsImage **out) {
    return vips_zoom(in, out, xfactor, yfactor, NULL);
}

int osprey_recomb(VipsImage *in, const double *matrix, int rows, int columns, VipsImage **out) {
    VipsImage *m = vips_image_new_matrix_from_array(columns, rows, matrix, rows * columns);
    if (m == NULL) return -1;
    int r = vips_recomb(in, out, m, NULL);
    g_object_unref(m);
    return r;
}

int osprey_pow_const1(VipsImage *in, double exponent, VipsImage **out) {
    return vips_pow_const1(in, out, exponent, NULL);
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

int osprey_jpegsave_interlaced(VipsImage *in, int quality, void **buf, size_t *len) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, "interlace", TRUE, NULL);
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
    osprey_vips_load_module_for("heifsave_buffer");
    return vips_heifsave_buffer(in, buf, len, "Q", quality,
                                "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "strip", TRUE, NULL);
}

int osprey_jxlsave(VipsImage *in, int quality, int lossless, int effort, void **buf, size_t *len) {
    osprey_vips_load_module_for("jxlsave_buffer");
    return vips_jxlsave_buffer(in, buf, len, "Q", quality, "lossless", lossless ? TRUE : FALSE,
                               "effort", effort, "strip", TRUE, NULL);
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
    osprey_vips_load_module_for(name);
    return vips_type_find("VipsOperation", name) != 0;
}

// MARK: - Colour management with cached lcms2 transforms

// libvips builds a new lcms2 transform for every image it colour-manages, and building one costs
// far more than applying it to a thumbnail: ~20 ms for an Adobe RGB profile, ~30 ms for the
// fallback CMYK profile, against well under a millisecond to transform 256 x 256 pixels. The
// same few profiles come back again and again (camera and editor profiles, the CMYK fallback),
// so transforms are built once per (profile bytes, pixel layout) and kept.

enum { osprey_icc_cache_limit = 32 };

// A pthread mutex rather than a GMutex: glib's mutex is built on its own futex code, which the
// thread sanitizer cannot see, so it reported the cache accesses under it as races.
static pthread_mutex_t osprey_icc_lock = PTHREAD_MUTEX_INITIALIZER;
// Per layout [cmyk][alpha]: GBytes (profile bytes) -> cmsHTRANSFORM.
static GHashTable *osprey_icc_cache[2][2];
static guint osprey_icc_cached;

static cmsHTRANSFORM osprey_icc_build(const void *profile, size_t length, int cmyk, int alpha) {
    cmsHPROFILE source = cmsOpenProfileFromMem(profile, (cmsUInt32Number)length);
    if (!source) return NULL;
    cmsColorSpaceSignature space = cmsGetColorSpace(source);
    if ((cmyk && space != cmsSigCmykData) || (!cmyk && space != cmsSigRgbData)) {
        cmsCloseProfile(source);
        return NULL;
    }
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    if (!srgb) {
        cmsCloseProfile(source);
        return NULL;
    }
    cmsUInt32Number in_format = cmyk
        ? (COLORSPACE_SH(PT_CMYK) | CHANNELS_SH(4) | BYTES_SH(1) | EXTRA_SH(alpha ? 1 : 0))
        : (alpha ? TYPE_RGBA_8 : TYPE_RGB_8);
    cmsUInt32Number out_format = alpha ? TYPE_RGBA_8 : TYPE_RGB_8;
    // Relative colorimetric, libvips' default intent; alpha is copied through unchanged.
    cmsHTRANSFORM transform = cmsCreateTransform(source, in_format, srgb, out_format,
                                                 INTENT_RELATIVE_COLORIMETRIC,
                                                 alpha ? cmsFLAGS_COPY_ALPHA : 0);
    cmsCloseProfile(source);
    cmsCloseProfile(srgb);
    return transform;
}

/// The cached transform for `profile` and the layout, building it when missing. `*owned` is set
/// when the cache is full and the caller must delete the transform after use.
static cmsHTRANSFORM osprey_icc_transform_for(const void *profile, size_t length, int cmyk, int alpha, int *owned) {
    *owned = 0;
    // Looked up through a key that borrows the profile bytes; only an inserted key copies them.
    GBytes *borrowed = g_bytes_new_static(profile, length);
    pthread_mutex_lock(&osprey_icc_lock);
    GHashTable **table = &osprey_icc_cache[cmyk][alpha];
    if (!*table) *table = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    cmsHTRANSFORM found = g_hash_table_lookup(*table, borrowed);
    pthread_mutex_unlock(&osprey_icc_lock);
    if (found) {
        g_bytes_unref(borrowed);
        return found;
    }

    cmsHTRANSFORM built = osprey_icc_build(profile, length, cmyk, alpha);
    if (!built) {
        g_bytes_unref(borrowed);
        return NULL;
    }
    pthread_mutex_lock(&osprey_icc_lock);
    cmsHTRANSFORM raced = g_hash_table_lookup(*table, borrowed);
    g_bytes_unref(borrowed);
    if (raced) {
        // Another thread built the same transform meanwhile: use the cached one.
        pthread_mutex_unlock(&osprey_icc_lock);
        cmsDeleteTransform(built);
        return raced;
    }
    if (osprey_icc_cached < osprey_icc_cache_limit) {
        // Cached transforms live as long as the process: another thread may be using any of
        // them, so none is ever deleted.
        g_hash_table_insert(*table, g_bytes_new(profile, length), built);
        osprey_icc_cached++;
        pthread_mutex_unlock(&osprey_icc_lock);
        return built;
    }
    pthread_mutex_unlock(&osprey_icc_lock);
    *owned = 1;
    return built;
}

/// The transform from libvips' fallback CMYK profile (what vips_colourspace() uses for CMYK
/// without a profile), built once. (Loading that profile inflates a large blob: it is not
/// worth hashing as a cache key on every image.)
static cmsHTRANSFORM osprey_icc_cmyk_fallback(int alpha) {
    static cmsHTRANSFORM transforms[2];
    static int tried[2];
    pthread_mutex_lock(&osprey_icc_lock);
    if (!tried[alpha]) {
        tried[alpha] = 1;
        VipsBlob *blob = NULL;
        if (vips_profile_load("cmyk", &blob, NULL) == 0 && blob) {
            size_t length = 0;
            const void *data = vips_area_get_data(VIPS_AREA(blob), &length, NULL, NULL, NULL);
            if (data && length > 0) transforms[alpha] = osprey_icc_build(data, length, 1, alpha);
            vips_area_unref(VIPS_AREA(blob));
        } else {
            vips_error_clear();
        }
    }
    cmsHTRANSFORM transform = transforms[alpha];
    pthread_mutex_unlock(&osprey_icc_lock);
    return transform;
}

static int osprey_transform_line(void *context, VipsPel *in, VipsPel *out, int width) {
    cmsDoTransform((cmsHTRANSFORM)context, in, out, (cmsUInt32Number)width);
    return 0;
}

int osprey_icc_to_srgb_cached(VipsImage *in, VipsImage **out) {
    *out = NULL;
    if (in->Coding != VIPS_CODING_NONE || in->BandFmt != VIPS_FORMAT_UCHAR) return 1;
    int cmyk = in->Type == VIPS_INTERPRETATION_CMYK;
    int colour_bands = cmyk ? 4 : 3;
    if (in->Bands != colour_bands && in->Bands != colour_bands + 1) return 1;
    if (!cmyk && in->Type != VIPS_INTERPRETATION_sRGB && in->Type != VIPS_INTERPRETATION_RGB) return 1;
    int alpha = in->Bands == colour_bands + 1;

    int owned = 0;
    cmsHTRANSFORM transform = NULL;
    if (vips_image_get_typeof(in, VIPS_META_ICC_NAME)) {
        const void *profile = NULL;
        size_t length = 0;
        if (vips_image_get_blob(in, VIPS_META_ICC_NAME, &profile, &length)) return -1;
        if (profile && length > 0) transform = osprey_icc_transform_for(profile, length, cmyk, alpha, &owned);
    } else if (cmyk) {
        transform = osprey_icc_cmyk_fallback(alpha);
    } else {
        return 1;
    }
    if (!transform) return 1;

    VipsImage *mem = vips_image_new_memory();
    int result = -1;
    if (!mem || vips_image_pipelinev(mem, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL)) goto done;
    mem->Bands = alpha ? 4 : 3;
    mem->Type = VIPS_INTERPRETATION_sRGB;
    // The pixels are sRGB now; the source profile no longer describes them.
    vips_image_remove(mem, VIPS_META_ICC_NAME);
    if (vips_image_write_prepare(mem) || osprey_render_lines(in, mem, 64, osprey_transform_line, transform)) goto done;
    result = 0;
done:
    if (owned) cmsDeleteTransform(transform);
    if (result == 0) {
        *out = mem;
    } else if (mem) {
        g_object_unref(mem);
    }
    return result;
}
