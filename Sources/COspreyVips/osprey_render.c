// Pixels into memory on the calling thread: for small images the hand-offs to and from libvips'
// thread pool's worker threads cost more than the pixels.
#include "osprey_vips.h"
#include "osprey_render.h"
#include <string.h>

int osprey_render_lines(VipsImage *in, VipsImage *out, int strip, osprey_line_writer write, void *context) {
    VipsRegion *region = vips_region_new(in);
    if (!region) return -1;
    for (int top = 0; top < in->Ysize; top += strip) {
        VipsRect rect = { 0, top, in->Xsize, VIPS_MIN(strip, in->Ysize - top) };
        if (vips_region_prepare(region, &rect)) {
            g_object_unref(region);
            return -1;
        }
        for (int y = 0; y < rect.height; y++) {
            if (write(context, VIPS_REGION_ADDR(region, 0, top + y), VIPS_IMAGE_ADDR(out, 0, top + y), in->Xsize)) {
                g_object_unref(region);
                return 1;
            }
        }
    }
    g_object_unref(region);
    return 0;
}

static int osprey_copy_line(void *context, VipsPel *in, VipsPel *out, int width) {
    (void)width;
    memcpy(out, in, *(const size_t *)context);
    return 0;
}

typedef struct {
    size_t line;
    int bands;
    VipsBandFormat format;
} osprey_opaque_copy;

// Copies the line, and stops at the first alpha sample below its maximum.
static int osprey_copy_opaque_line(void *context, VipsPel *in, VipsPel *out, int width) {
    const osprey_opaque_copy *copy = context;
    memcpy(out, in, copy->line);
    size_t count = (size_t)width * copy->bands;
    if (copy->format == VIPS_FORMAT_UCHAR) {
        for (size_t i = copy->bands - 1; i < count; i += copy->bands)
            if (in[i] != 255) return 1;
    } else {
        const unsigned short *samples = (const unsigned short *)in;
        for (size_t i = copy->bands - 1; i < count; i += copy->bands)
            if (samples[i] != 65535) return 1;
    }
    return 0;
}

// `in` rendered on the calling thread into a new memory image, `strip` lines at a time, each line
// through `write`: 0 with `*out` set, 1 when the writer stopped the render (nothing kept), -1 on failure.
static int osprey_render_to_memory(VipsImage *in, int strip, osprey_line_writer write, void *context, VipsImage **out) {
    *out = NULL;
    VipsImage *mem = vips_image_new_memory();
    if (!mem) return -1;
    int r = -1;
    if (!vips_image_pipelinev(mem, VIPS_DEMAND_STYLE_THINSTRIP, in, NULL) && !vips_image_write_prepare(mem)) {
        r = osprey_render_lines(in, mem, strip, write, context);
    }
    if (r != 0) {
        g_object_unref(mem);
        return r;
    }
    *out = mem;
    return 0;
}

int osprey_copy_memory_if_opaque(VipsImage *in, VipsImage **out) {
    *out = NULL;
    if (!vips_image_hasalpha(in) || (in->BandFmt != VIPS_FORMAT_UCHAR && in->BandFmt != VIPS_FORMAT_USHORT)) return 0;
    osprey_opaque_copy copy = { VIPS_IMAGE_SIZEOF_LINE(in), in->Bands, in->BandFmt };
    // Short strips: a source with transparency near the top (rounded corners) stops early.
    switch (osprey_render_to_memory(in, 16, osprey_copy_opaque_line, &copy, out)) {
    case 0: return 1;
    case 1: return 0;
    default: return -1;
    }
}

// Same result as vips_image_copy_memory(), evaluated on the calling thread (see the top of the file).
int osprey_copy_memory_inline(VipsImage *in, VipsImage **out) {
    size_t line = VIPS_IMAGE_SIZEOF_LINE(in);
    return osprey_render_to_memory(in, 64, osprey_copy_line, &line, out) ? -1 : 0;
}

int osprey_pixels_in_memory(VipsImage *in, VipsImage **out) {
    if (in->dtype == VIPS_IMAGE_SETBUF || in->dtype == VIPS_IMAGE_SETBUF_FOREIGN || in->dtype == VIPS_IMAGE_MMAPIN) {
        g_object_ref(in);
        *out = in;
        return 0;
    }
    return osprey_copy_memory_inline(in, out);
}
