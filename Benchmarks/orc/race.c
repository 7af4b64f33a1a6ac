// The liborc code-memory race behind Osprey's osprey_orc_frees_unlocked check, reproduced with
// libvips alone: THREADS threads thumbnail one image from memory to varying sizes for SECONDS
// (each resize compiles orc programs under libvips' lock and frees them, on dispose, without it).
//   cc -O2 -o race race.c $(pkg-config --cflags --libs vips) -lpthread
//   ./race IMAGE THREADS SECONDS            (VIPS_NOVECTOR=1 ./race ... : the C paths)
// With liborc 0.4.33 some runs die (SIGSEGV, or glibc's "malloc_consolidate(): unaligned fastbin
// chunk detected"); see Benchmarks/results/2026-11-24-orc-race.txt. Built with Osprey's serialised
// orc_program_compile / orc_program_free (as every Osprey process runs since they exist):
//   cc -O2 -o race-serialised race.c ../../Sources/COspreyVips/osprey_orc.c \
//      -I../../Sources/COspreyVips/include $(pkg-config --cflags --libs vips) -ldl -lpthread
// Benchmarks/orc/stress.sh runs both builds many times and counts the runs that died.
#include <vips/vips.h>
#include <vips/vector.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
// Osprey's check, present in the serialised build only.
int osprey_orc_serialised(void) __attribute__((weak));
static void *buf; static size_t len; static double seconds;
static void *work(void *arg) {
    (void)arg;
    struct timespec t0, t; clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = 0;
    for (;;) {
        VipsImage *out = NULL; void *o = NULL; size_t olen = 0;
        int size = 40 + (int)(n % 150);
        if (vips_thumbnail_buffer(buf, len, &out, size, NULL)) { fprintf(stderr, "%s", vips_error_buffer()); exit(1); }
        if (vips_jpegsave_buffer(out, &o, &olen, NULL)) exit(1);
        g_free(o); g_object_unref(out); n++;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds) break;
    }
    printf("thread done: %ld images\n", n);
    return NULL;
}
int main(int argc, char **argv) {
    if (VIPS_INIT(argv[0])) return 1;
    printf("vectors %s, compile and free %s\n", vips_vector_isenabled() ? "on" : "off",
           osprey_orc_serialised && osprey_orc_serialised() ? "serialised by Osprey" : "as liborc does them");
    vips_cache_set_max(0); vips_concurrency_set(1);
    if (!g_file_get_contents(argv[1], (gchar **)&buf, &len, NULL)) return 1;
    int threads = atoi(argv[2]); seconds = atof(argv[3]);
    pthread_t t[64];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return 0;
}
