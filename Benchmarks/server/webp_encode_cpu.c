// CPU per WebP encode, libvips' webpsave (as osprey_webpsave calls it) against Osprey's direct
// libwebp path (osprey_webpsave_still), interleaved on the same in-memory pixels; also checks that
// both write the same VP8 bitstream. Build and run from the repository root:
//
//   gcc -O2 -ISources/COspreyVips/include -o /tmp/webp_encode_cpu Benchmarks/server/webp_encode_cpu.c
//       Sources/COspreyVips/osprey_webp.c Sources/COspreyVips/osprey_vips.c
//       $(pkg-config --cflags --libs vips libwebp lcms2) -lpthread       (one command)
//   VIPS_CONCURRENCY=2 /tmp/webp_encode_cpu 20 IMAGE...
//
// The images should be what a request encodes (e.g. `vips thumbnail IN OUT.png 512 --height 512
// --size down` of the test images).
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <vips/vips.h>
#include "osprey_vips.h"
#include "osprey_webp.h"

static double cpu_seconds(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

// The VP8 or VP8L chunk's payload of a WebP file.
static const unsigned char *bitstream(const unsigned char *b, size_t n, size_t *len) {
    for (size_t i = 12; i + 8 <= n;) {
        size_t s = b[i + 4] | b[i + 5] << 8 | b[i + 6] << 16 | (size_t)b[i + 7] << 24;
        if (!memcmp(b + i, "VP8 ", 4) || !memcmp(b + i, "VP8L", 4)) {
            *len = s;
            return b + i + 8;
        }
        i += 8 + s + (s & 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || VIPS_INIT(argv[0])) return 1;
    int rounds = atoi(argv[1]);
    double sumVips = 0, sumDirect = 0;
    size_t bytesVips = 0, bytesDirect = 0;
    int all = 1;
    for (int i = 2; i < argc; i++) {
        VipsImage *file = vips_image_new_from_file(argv[i], NULL);
        if (!file) return 1;
        VipsImage *pixels = vips_image_copy_memory(file);
        g_object_unref(file);
        double cpuVips = 0, cpuDirect = 0;
        size_t lenVips = 0, lenDirect = 0;
        int same = 1;
        for (int r = 0; r < rounds; r++) {
            void *a, *b;
            double t0 = cpu_seconds();
            if (vips_webpsave_buffer(pixels, &a, &lenVips, "Q", 80, "lossless", FALSE, "strip", TRUE, NULL)) return 1;
            double t1 = cpu_seconds();
            if (osprey_webpsave_still(pixels, 80, 0, &b, &lenDirect)) return 1;
            double t2 = cpu_seconds();
            cpuVips += t1 - t0;
            cpuDirect += t2 - t1;
            size_t na, nb;
            const unsigned char *sa = bitstream(a, lenVips, &na), *sb = bitstream(b, lenDirect, &nb);
            same &= sa && sb && na == nb && !memcmp(sa, sb, na);
            g_free(a);
            g_free(b);
        }
        printf("%-40s %4dx%-4d %d bands  webpsave %7.3f ms %6zu B  direct %7.3f ms %6zu B  same VP8: %s\n", argv[i],
               pixels->Xsize, pixels->Ysize, pixels->Bands, cpuVips / rounds * 1e3, lenVips, cpuDirect / rounds * 1e3,
               lenDirect, same ? "yes" : "NO");
        sumVips += cpuVips / rounds;
        sumDirect += cpuDirect / rounds;
        bytesVips += lenVips;
        bytesDirect += lenDirect;
        all &= same;
        g_object_unref(pixels);
    }
    int n = argc - 2;
    printf("mean over %d images: webpsave %.3f ms CPU, direct %.3f ms CPU (%.3f ms less, %.1f%%); bytes %zu / %zu; "
           "same VP8 for all: %s\n",
           n, sumVips / n * 1e3, sumDirect / n * 1e3, (sumVips - sumDirect) / n * 1e3,
           (sumVips - sumDirect) / sumVips * 100, bytesVips, bytesDirect, all ? "yes" : "NO");
    return 0;
}
