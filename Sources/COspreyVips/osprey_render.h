// Rendering a libvips pipeline on the calling thread, line by line (shared by the copies in
// osprey_render.c and the colour transforms in osprey_vips.c; not part of the module's API).
#ifndef OSPREY_RENDER_H
#define OSPREY_RENDER_H

#include <vips/vips.h>

/// Called for every line rendered by osprey_render_lines: `in` is the source line, `out` the
/// same line of the output image. Returns 0 to go on, anything else to stop the render.
typedef int (*osprey_line_writer)(void *context, VipsPel *in, VipsPel *out, int width);

/// Evaluates `in` on the calling thread, `strip` lines at a time from the top (so sequential
/// loaders are read in order), handing each line to `write` with the same line of `out`, an in-memory
/// image of the same size that write_prepare has allocated. Returns -1 on failure, 1 when a
/// writer stopped the render, 0 when every line was written.
int osprey_render_lines(VipsImage *in, VipsImage *out, int strip, osprey_line_writer write, void *context);

#endif
