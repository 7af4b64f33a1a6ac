#include "osprey_jpeg_progressive.h"
#include <jpeglib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
} progressive_error;

enum { STATE_HEADER, STATE_SCANS, STATE_FAILED };

struct osprey_jpeg_progressive {
    // First: libjpeg's callbacks get this struct through their cinfo pointer.
    struct jpeg_decompress_struct cinfo;
    progressive_error error;
    struct jpeg_source_mgr source;
    // The bytes appended and not yet consumed start at source.next_input_byte, inside buffer.
    unsigned char *buffer;
    size_t capacity;
    // Bytes libjpeg asked to skip (an unused marker segment) that have not arrived yet.
    size_t skip;
    int scale_denom;
    int state;
    // The last scan whose data has all been decoded.
    int complete_scan;
    // An output pass whose jpeg_finish_output suspended (it reads up to the next scan's header).
    int finish_pending;
    // The image of an output pass in progress, unreferenced if the pass fails.
    VipsImage *rendering;
    // The header's ICC profile (NULL: none) and EXIF orientation (0: none), for every render.
    void *profile;
    size_t profile_length;
    int orientation;
};

static void progressive_error_exit(j_common_ptr cinfo) {
    progressive_error *error = (progressive_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->escape, 1);
}

// Warnings ("premature end of data segment" and the like) are expected in a prefix.
static void progressive_no_output(j_common_ptr cinfo) { (void)cinfo; }

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }

// Suspends: the rest of the file has not arrived. libjpeg keeps its place and resumes from
// source.next_input_byte when called again.
static boolean source_fill(j_decompress_ptr cinfo) {
    (void)cinfo;
    return FALSE;
}

static void source_skip(j_decompress_ptr cinfo, long count) {
    osprey_jpeg_progressive *decoder = (osprey_jpeg_progressive *)cinfo;
    struct jpeg_source_mgr *source = cinfo->src;
    if (count <= 0) return;
    if ((size_t)count <= source->bytes_in_buffer) {
        source->next_input_byte += count;
        source->bytes_in_buffer -= (size_t)count;
    } else {
        decoder->skip += (size_t)count - source->bytes_in_buffer;
        source->next_input_byte += source->bytes_in_buffer;
        source->bytes_in_buffer = 0;
    }
}

static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

osprey_jpeg_progressive *osprey_jpeg_progressive_new(int scale_denom) {
    osprey_jpeg_progressive *decoder = calloc(1, sizeof(osprey_jpeg_progressive));
    if (!decoder) return NULL;
    decoder->scale_denom = scale_denom == 2 || scale_denom == 4 || scale_denom == 8 ? scale_denom : 1;
    decoder->cinfo.err = jpeg_std_error(&decoder->error.manager);
    decoder->error.manager.error_exit = progressive_error_exit;
    decoder->error.manager.output_message = progressive_no_output;
    jpeg_create_decompress(&decoder->cinfo);
    decoder->source.init_source = source_init;
    decoder->source.fill_input_buffer = source_fill;
    decoder->source.skip_input_data = source_skip;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = source_term;
    decoder->cinfo.src = &decoder->source;
    return decoder;
}

void osprey_jpeg_progressive_free(osprey_jpeg_progressive *decoder) {
    if (!decoder) return;
    jpeg_destroy_decompress(&decoder->cinfo);
    if (decoder->rendering) g_object_unref(decoder->rendering);
    free(decoder->profile);
    free(decoder->buffer);
    free(decoder);
}

static int progressive_fail(osprey_jpeg_progressive *decoder, const char *message) {
    decoder->state = STATE_FAILED;
    if (decoder->rendering) {
        g_object_unref(decoder->rendering);
        decoder->rendering = NULL;
    }
    vips_error("osprey_jpeg_progressive", "%s", message);
    return -1;
}

// Reads the header, then decodes scans until the bytes run out. Kept apart from the functions
// that change the decoder's fields after a longjmp.
static int progressive_advance(osprey_jpeg_progressive *decoder) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (setjmp(decoder->error.escape)) return progressive_fail(decoder, decoder->error.message);
    if (decoder->state == STATE_HEADER) {
        int header = jpeg_read_header(cinfo, TRUE);
        if (header == JPEG_SUSPENDED) return 0;
        if (header != JPEG_HEADER_OK) return progressive_fail(decoder, "no image in the JPEG");
        if (!cinfo->progressive_mode) return progressive_fail(decoder, "not a progressive JPEG");
        if (cinfo->num_components == 3 && cinfo->jpeg_color_space != JCS_CMYK && cinfo->jpeg_color_space != JCS_YCCK) {
            cinfo->out_color_space = JCS_RGB;
        } else if (cinfo->num_components == 1) {
            cinfo->out_color_space = JCS_GRAYSCALE;
        } else {
            return progressive_fail(decoder, "colour other than greyscale or RGB");
        }
        cinfo->buffered_image = TRUE;
        // Block smoothing guesses the missing AC coefficients of early scans; at full size it
        // makes an output pass cost about three times as much.
        cinfo->do_block_smoothing = FALSE;
        cinfo->scale_num = 1;
        cinfo->scale_denom = (unsigned int)decoder->scale_denom;
        jpeg_start_decompress(cinfo);
        decoder->state = STATE_SCANS;
    }
    if (decoder->finish_pending && jpeg_finish_output(cinfo)) decoder->finish_pending = 0;
    for (;;) {
        int status = jpeg_consume_input(cinfo);
        if (status == JPEG_SCAN_COMPLETED || status == JPEG_REACHED_EOI) decoder->complete_scan = cinfo->input_scan_number;
        if (status == JPEG_SUSPENDED || status == JPEG_REACHED_EOI) return 0;
    }
}

int osprey_jpeg_progressive_append(osprey_jpeg_progressive *decoder, const void *bytes, size_t len) {
    if (decoder->state == STATE_FAILED) {
        vips_error("osprey_jpeg_progressive", "%s", "decoder failed before");
        return -1;
    }
    size_t skipped = decoder->skip < len ? decoder->skip : len;
    decoder->skip -= skipped;
    bytes = (const unsigned char *)bytes + skipped;
    len -= skipped;
    size_t kept = decoder->source.bytes_in_buffer;
    if (kept + len > decoder->capacity) {
        size_t capacity = (kept + len) * 2;
        unsigned char *grown = malloc(capacity);
        if (!grown) return progressive_fail(decoder, "out of memory");
        if (kept) memcpy(grown, decoder->source.next_input_byte, kept);
        free(decoder->buffer);
        decoder->buffer = grown;
        decoder->capacity = capacity;
    } else if (kept && decoder->source.next_input_byte != decoder->buffer) {
        memmove(decoder->buffer, decoder->source.next_input_byte, kept);
    }
    if (len) memcpy(decoder->buffer + kept, bytes, len);
    decoder->source.next_input_byte = decoder->buffer;
    decoder->source.bytes_in_buffer = kept + len;
    return progressive_advance(decoder);
}

void osprey_jpeg_progressive_keep_metadata(osprey_jpeg_progressive *decoder, VipsImage *like) {
    const void *profile;
    size_t length;
    if (vips_image_get_typeof(like, VIPS_META_ICC_NAME) && !vips_image_get_blob(like, VIPS_META_ICC_NAME, &profile, &length) && length) {
        void *copy = malloc(length);
        if (copy) {
            memcpy(copy, profile, length);
            free(decoder->profile);
            decoder->profile = copy;
            decoder->profile_length = length;
        }
    }
    int orientation;
    if (vips_image_get_typeof(like, VIPS_META_ORIENTATION) && !vips_image_get_int(like, VIPS_META_ORIENTATION, &orientation)) {
        decoder->orientation = orientation;
    }
}

// One output pass of the last complete scan into decoder->rendering; 1 when no scan has
// started since the last pass (its jpeg_finish_output still waits for one), so nothing is new.
static int progressive_output(osprey_jpeg_progressive *decoder) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (setjmp(decoder->error.escape)) return progressive_fail(decoder, decoder->error.message);
    if (decoder->finish_pending) {
        if (!jpeg_finish_output(cinfo)) return 1;
        decoder->finish_pending = 0;
    }
    if (!jpeg_start_output(cinfo, decoder->complete_scan)) return progressive_fail(decoder, "output pass suspended");
    VipsImage *image = vips_image_new_memory();
    decoder->rendering = image;
    int bands = cinfo->output_components;
    vips_image_init_fields(image, (int)cinfo->output_width, (int)cinfo->output_height, bands, VIPS_FORMAT_UCHAR,
        VIPS_CODING_NONE, bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB, 1.0, 1.0);
    if (vips_image_write_prepare(image)) return progressive_fail(decoder, "no memory for the preview");
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW rows[16];
        int count = cinfo->rec_outbuf_height < 16 ? cinfo->rec_outbuf_height : 16;
        for (int i = 0; i < count; i++) {
            JDIMENSION y = cinfo->output_scanline + (JDIMENSION)i;
            if (y >= cinfo->output_height) y = cinfo->output_height - 1;
            rows[i] = VIPS_IMAGE_ADDR(image, 0, y);
        }
        // The scan is complete, so the pass never waits for input; 0 lines would loop forever.
        if (jpeg_read_scanlines(cinfo, rows, (JDIMENSION)count) == 0) return progressive_fail(decoder, "output pass stalled");
    }
    if (!jpeg_finish_output(cinfo)) decoder->finish_pending = 1;
    return 0;
}

int osprey_jpeg_progressive_render(osprey_jpeg_progressive *decoder, VipsImage **out) {
    *out = NULL;
    if (decoder->state == STATE_FAILED) {
        vips_error("osprey_jpeg_progressive", "%s", "decoder failed before");
        return -1;
    }
    if (decoder->state != STATE_SCANS || decoder->complete_scan == 0) return 0;
    int status = progressive_output(decoder);
    if (status) return status < 0 ? -1 : 0;
    VipsImage *image = decoder->rendering;
    decoder->rendering = NULL;
    if (decoder->profile) vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, decoder->profile, decoder->profile_length);
    if (decoder->orientation) vips_image_set_int(image, VIPS_META_ORIENTATION, decoder->orientation);
    *out = image;
    return 0;
}

int osprey_jpeg_progressive_scans(osprey_jpeg_progressive *decoder) { return decoder->complete_scan; }
