#include "osprey_vips_server.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int osprey_find_trim(VipsImage *in, double threshold, const double *rgb, int bottom_right, int *left, int *top, int *width,
                     int *height) {
    // find_trim compares colour bands only: drop an alpha band first.
    VipsImage *colour = NULL;
    int bands = vips_image_hasalpha(in) ? in->Bands - 1 : in->Bands;
    if (vips_extract_band(in, &colour, 0, "n", bands, NULL)) return -1;
    VipsArrayDouble *background = NULL;
    if (rgb) {
        if (bands == 1) {
            // Grey against a colour: the grey band three times, so each channel is compared.
            VipsImage *grey[3] = {colour, colour, colour};
            VipsImage *joined = NULL;
            int failed = vips_bandjoin(grey, &joined, 3, NULL);
            g_object_unref(colour);
            if (failed) return -1;
            colour = joined;
        }
        background = vips_array_double_new(rgb, 3);
    } else {
        double *pixel = NULL;
        int n = 0;
        int x = bottom_right ? colour->Xsize - 1 : 0, y = bottom_right ? colour->Ysize - 1 : 0;
        if (vips_getpoint(colour, &pixel, &n, x, y, NULL)) {
            g_object_unref(colour);
            return -1;
        }
        background = vips_array_double_new(pixel, n);
        g_free(pixel);
    }
    int status = vips_find_trim(colour, left, top, width, height, "threshold", threshold, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    g_object_unref(colour);
    return status;
}

int osprey_malloc_arena_max(int arenas) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
    return 0;
#endif
}

int osprey_malloc_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
    return 0;
#endif
}

int osprey_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
