#include "osprey_jpeg.h"
#include "osprey_vips.h"
#include <jpeglib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Why not vips_jpegsave_buffer: it renders the image through vips_sink_disc, which hands the
// strips to libvips' thread pool and back; for a thumbnail the hand-offs cost more than the
// compression (Benchmarks/results/2026-11-24-jpeg-direct-encode.txt).

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
} osprey_jpeg_error;

static void osprey_jpeg_error_exit(j_common_ptr cinfo) {
    osprey_jpeg_error *error = (osprey_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->escape, 1);
}

static void osprey_jpeg_no_output(j_common_ptr cinfo) { (void)cinfo; }

// The state a longjmp may leave behind; kept out of the function that calls setjmp so that no
// local is modified between setjmp and longjmp.
typedef struct {
    struct jpeg_compress_struct cinfo;
    osprey_jpeg_error error;
    VipsImage *pixels;
    unsigned char *out;
    unsigned long out_len;
} osprey_jpeg_job;

static int osprey_jpeg_run(osprey_jpeg_job *job, int quality) {
    struct jpeg_compress_struct *cinfo = &job->cinfo;
    if (setjmp(job->error.escape)) return -1;
    jpeg_mem_dest(cinfo, &job->out, &job->out_len);
    VipsImage *pixels = job->pixels;
    cinfo->image_width = (JDIMENSION)pixels->Xsize;
    cinfo->image_height = (JDIMENSION)pixels->Ysize;
    cinfo->input_components = pixels->Bands;
    cinfo->in_color_space = pixels->Bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    // libvips' subsample_mode "auto": full-resolution chroma from quality 90 up.
    if (quality >= 90) {
        for (int i = 0; i < cinfo->num_components; i++) {
            cinfo->comp_info[i].h_samp_factor = 1;
            cinfo->comp_info[i].v_samp_factor = 1;
        }
    }
    cinfo->write_JFIF_header = FALSE;
    jpeg_start_compress(cinfo, TRUE);
    size_t stride = VIPS_IMAGE_SIZEOF_LINE(pixels);
    while (cinfo->next_scanline < cinfo->image_height) {
        JSAMPROW row = (JSAMPROW)VIPS_IMAGE_ADDR(pixels, 0, 0) + stride * cinfo->next_scanline;
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
    return 0;
}

int osprey_jpegsave_still(VipsImage *in, int quality, void **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    if (in->BandFmt != VIPS_FORMAT_UCHAR || (in->Bands != 1 && in->Bands != 3) || in->Coding != VIPS_CODING_NONE) {
        vips_error("osprey_jpegsave_still", "%s", "needs 8-bit pixels with 1 or 3 bands");
        return -1;
    }
    if (in->Xsize > JPEG_MAX_DIMENSION || in->Ysize > JPEG_MAX_DIMENSION) {
        vips_error("osprey_jpegsave_still", "%s", "image too large for JPEG");
        return -1;
    }
    osprey_jpeg_job *job = calloc(1, sizeof(osprey_jpeg_job));
    if (!job) {
        vips_error("osprey_jpegsave_still", "%s", "out of memory");
        return -1;
    }
    if (osprey_pixels_in_memory(in, &job->pixels)) {
        free(job);
        return -1;
    }
    job->cinfo.err = jpeg_std_error(&job->error.manager);
    job->error.manager.error_exit = osprey_jpeg_error_exit;
    job->error.manager.output_message = osprey_jpeg_no_output;
    jpeg_create_compress(&job->cinfo);
    int status = osprey_jpeg_run(job, quality);
    jpeg_destroy_compress(&job->cinfo);
    g_object_unref(job->pixels);
    if (status == 0) {
        *buf = g_malloc(job->out_len);
        memcpy(*buf, job->out, job->out_len);
        *len = job->out_len;
    } else {
        vips_error("osprey_jpegsave_still", "JPEG encoding failed: %s", job->error.message);
    }
    free(job->out);
    free(job);
    return status;
}
