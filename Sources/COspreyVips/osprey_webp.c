#include "osprey_webp.h"
#include "osprey_vips.h"
#include <string.h>
#include <webp/decode.h>
#include <webp/encode.h>

// Why not vips_webpsave_buffer for still images: it renders the image through vips_sink_disc,
// whose thread pool hands the strips to worker threads and runs the encode on another one, which
// costs about half a millisecond per image on 2 cores; and libvips 8.14.0-8.14.1 ignore `strip`
// in webpsave, writing the source's ICC, EXIF and XMP chunks (and a made-up EXIF) into every file.

static int osprey_webp_fail(const char *message) {
    vips_error("osprey_webpsave_still", "%s", message);
    return -1;
}

// `in` as 8-bit RGB or RGBA pixels held in memory (a new reference): greyscale is converted as
// libvips' savers convert it, pixels not yet in memory are rendered on the calling thread.
static int osprey_webp_pixels(VipsImage *in, VipsImage **out) {
    *out = NULL;
    if (in->BandFmt != VIPS_FORMAT_UCHAR || in->Bands < 1 || in->Bands > 4 || in->Coding != VIPS_CODING_NONE) {
        return osprey_webp_fail("needs 8-bit pixels with 1 to 4 bands");
    }
    VipsImage *rgb = in;
    g_object_ref(rgb);
    if (in->Bands < 3) {
        g_object_unref(rgb);
        if (vips_colourspace(in, &rgb, VIPS_INTERPRETATION_sRGB, "source_space", VIPS_INTERPRETATION_B_W, NULL)) return -1;
    }
    int status = osprey_pixels_in_memory(rgb, out);
    g_object_unref(rgb);
    return status;
}

int osprey_webpsave_still(VipsImage *in, int quality, int lossless, void **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    if (in->Xsize > WEBP_MAX_DIMENSION || in->Ysize > WEBP_MAX_DIMENSION) return osprey_webp_fail("image too large for WebP");
    VipsImage *pixels = NULL;
    if (osprey_webp_pixels(in, &pixels)) return -1;

    // vips_webpsave's configuration: the preset only for lossy, then its effort and alpha_q.
    WebPConfig config;
    int configured = lossless ? WebPConfigInit(&config) : WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, (float)quality);
    config.lossless = lossless ? 1 : 0;
    config.quality = (float)quality;
    config.method = 4;
    config.alpha_quality = 100;
    if (!configured || !WebPValidateConfig(&config)) {
        g_object_unref(pixels);
        return osprey_webp_fail("invalid WebP configuration");
    }

    WebPPicture picture;
    WebPMemoryWriter writer;
    if (!WebPPictureInit(&picture)) {
        g_object_unref(pixels);
        return osprey_webp_fail("libwebp version mismatch");
    }
    WebPMemoryWriterInit(&writer);
    picture.width = pixels->Xsize;
    picture.height = pixels->Ysize;
    // Lossless works on ARGB; lossy converts straight to YUV, as libvips has it.
    picture.use_argb = lossless ? 1 : 0;
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    const uint8_t *data = VIPS_IMAGE_ADDR(pixels, 0, 0);
    int stride = (int)VIPS_IMAGE_SIZEOF_LINE(pixels);
    int imported = pixels->Bands == 4 ? WebPPictureImportRGBA(&picture, data, stride)
                                      : WebPPictureImportRGB(&picture, data, stride);
    int encoded = imported && WebPEncode(&config, &picture);
    WebPPictureFree(&picture);
    g_object_unref(pixels);
    if (!encoded) {
        WebPMemoryWriterClear(&writer);
        return osprey_webp_fail(imported ? "WebP encoding failed" : "out of memory");
    }
    *buf = g_malloc(writer.size);
    memcpy(*buf, writer.mem, writer.size);
    *len = writer.size;
    WebPMemoryWriterClear(&writer);
    return 0;
}

int osprey_webp_declared_size(const void *buf, size_t len, int *width, int *height) {
    return WebPGetInfo(buf, len, width, height) ? 0 : -1;
}
