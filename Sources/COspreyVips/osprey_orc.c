// liborc's two entry points that allocate and free JIT code memory, as libvips calls them,
// serialised on one mutex.
//
// Why: libvips 8.14 compiles its orc programs (orc_program_compile, which allocates code memory)
// under its global lock, but frees them (orc_program_free, when a resize or a convolution is
// disposed) without it; liborc before 0.4.34 frees code memory without the lock its allocator
// takes (fixed upstream in 0.4.34, "orccodemem: Fix for potential race in codemem alloc/free").
// Two threads resizing at once could corrupt orc's list of code chunks and crash the process.
// Defined here, in the executable that links Osprey, these definitions come first in the
// process's symbol lookup, so libvips' calls reach them; each takes the mutex and calls liborc's
// own function (the next definition, RTLD_NEXT). Compiling and freeing then never overlap, which
// is what liborc 0.4.34 ensures itself. osprey_vips_init checks that the lookup does reach them
// (osprey_orc_serialised) before it leaves libvips' vector paths on with a liborc older than
// 0.4.34; when it does not, the vector paths are turned off instead.
// libvips is the only user of liborc in an Osprey process, and it calls no other liborc function
// that allocates or frees code memory.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "osprey_vips.h"

// liborc's prototypes, without its headers (Osprey does not build against liborc): a program is
// an opaque pointer and OrcCompileResult an int-sized enum.
int orc_program_compile(void *program);
void orc_program_free(void *program);

static pthread_mutex_t osprey_orc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t osprey_orc_once = PTHREAD_ONCE_INIT;
static int (*osprey_orc_compile_next)(void *);
static void (*osprey_orc_free_next)(void *);

static void osprey_orc_resolve(void) {
    osprey_orc_compile_next = (int (*)(void *))dlsym(RTLD_NEXT, "orc_program_compile");
    osprey_orc_free_next = (void (*)(void *))dlsym(RTLD_NEXT, "orc_program_free");
}

int orc_program_compile(void *program) {
    pthread_once(&osprey_orc_once, osprey_orc_resolve);
    // OrcCompileResult's ORC_COMPILE_RESULT_UNKNOWN_COMPILE (0x100): libvips then runs the
    // program's C fallback. Not reached: libvips only calls this when liborc is loaded.
    if (!osprey_orc_compile_next) return 0x100;
    pthread_mutex_lock(&osprey_orc_lock);
    int result = osprey_orc_compile_next(program);
    pthread_mutex_unlock(&osprey_orc_lock);
    return result;
}

void orc_program_free(void *program) {
    pthread_once(&osprey_orc_once, osprey_orc_resolve);
    if (!osprey_orc_free_next) return;
    pthread_mutex_lock(&osprey_orc_lock);
    osprey_orc_free_next(program);
    pthread_mutex_unlock(&osprey_orc_lock);
}

int osprey_orc_serialised(void) {
    pthread_once(&osprey_orc_once, osprey_orc_resolve);
    return osprey_orc_compile_next && osprey_orc_free_next
        && dlsym(RTLD_DEFAULT, "orc_program_compile") == (void *)orc_program_compile
        && dlsym(RTLD_DEFAULT, "orc_program_free") == (void *)orc_program_free;
}
