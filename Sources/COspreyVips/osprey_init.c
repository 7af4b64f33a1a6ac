#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <gmodule.h>
#include "osprey_vips.h"
#include <vips/vector.h>

static void osprey_quiet_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// libvips' module directory when Osprey loads its modules on demand; empty when libvips loaded
/// them itself at init. Written once, inside osprey_vips_init (which Swift runs once, before any
/// other libvips call), and only read afterwards.
static char osprey_module_dir[PATH_MAX];

/// The directory of the modules that libvips would load: vips-modules-X.Y next to libvips' own
/// shared library. Empty unless it exists and the user left VIPSHOME (libvips' override) unset.
static void osprey_find_module_dir(void) {
    Dl_info info;
    if (g_getenv("VIPSHOME") || !dladdr((void *)vips_init, &info) || !info.dli_fname) return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash || !strstr(slash, "libvips")) return;
    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%.*s/vips-modules-%d.%d", (int)(slash - info.dli_fname), info.dli_fname,
                     VIPS_MAJOR_VERSION, VIPS_MINOR_VERSION);
    if (n <= 0 || (size_t)n >= sizeof dir || !g_file_test(dir, G_FILE_TEST_IS_DIR)) return;
    memcpy(osprey_module_dir, dir, (size_t)n + 1);
}

const char *osprey_orc_version(void) {
    // libvips links liborc when it was built with it; Osprey does not link it itself.
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "orc_version_string");
    return version ? version() : NULL;
}

int osprey_orc_frees_unlocked(const char *version) {
    unsigned major, minor, micro;
    if (!version || sscanf(version, "%u.%u.%u", &major, &minor, &micro) != 3) return 0;
    return major == 0 && (minor < 4 || (minor == 4 && micro < 34));
}

int osprey_vips_vectors_enabled(void) {
    return vips_vector_isenabled() ? 1 : 0;
}

int osprey_vips_init(void) {
    // Why: vips_init loads every module in its module directory (Debian's 8.14: heif, magick,
    // jxl, openslide, poppler, with NSS, sqlite, x265, ImageMagick behind them), about 23 ms of
    // each process's start; Osprey only hands libvips formats it sniffed itself, of which only
    // AVIF/HEIF (heif), BMP (magick), JPEG XL (jxl) and PDF (poppler) live in modules, loaded by
    // osprey_vips_load_module_for on first use. libvips reads its module directory from the VIPSHOME prefix, so init runs with
    // one that has none, and the variable is removed again afterwards. (libvips' own init sets
    // VIPSHOME to the prefix it guessed and leaves it set: the environment was written during
    // init before too, once.)
    osprey_find_module_dir();
    if (osprey_module_dir[0]) g_setenv("VIPSHOME", "/nonexistent/osprey-loads-vips-modules-on-demand", TRUE);
    int status = VIPS_INIT("osprey");
    if (osprey_module_dir[0]) g_unsetenv("VIPSHOME");
    if (status != 0) return -1;
    // libvips prints warnings (e.g. "ignoring nclx profile") to stderr; failures still surface as
    // errors through the error buffer, so warnings are dropped unless OSPREY_VIPS_WARNINGS is set.
    if (!g_getenv("OSPREY_VIPS_WARNINGS")) {
        g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, osprey_quiet_log, NULL);
    }
    // Why: libvips 8.14 compiles its orc programs under its global lock but frees them (when a
    // resize or convolution is disposed) without it, and liborc before 0.4.34 frees JIT code
    // without the lock its allocator takes: two threads resizing can corrupt orc's code list and
    // crash the process (Debian 12 ships 0.4.33). osprey_orc.c serialises the two; when its
    // definitions are not the ones libvips reaches, the C paths (the same images, 4-12% more CPU
    // per image) are used instead.
    if (osprey_orc_frees_unlocked(osprey_orc_version()) && !osprey_orc_serialised()) vips_vector_set_enabled(FALSE);
    // Osprey caches images itself; libvips' operation cache would only hold memory.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    return 0;
}

void osprey_vips_load_module_for(const char *operation) {
    // The modules Osprey loads on first use, by the prefix of the operations they provide:
    // heif (AVIF/HEIF), magick (BMP), jxl (JPEG XL, load and save), poppler (PDF, "pdfload…").
    // (SVG's loader, librsvg, is built into libvips itself.)
    static const char *const prefixes[] = { "heif", "magick", "jxl", "pdf" };
    static const char *const modules[] = { "heif", "magick", "jxl", "poppler" };
    enum { count = sizeof prefixes / sizeof prefixes[0] };
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int tried[count];
    if (!osprey_module_dir[0]) return;
    int module = 0;
    while (module < count && strncmp(operation, prefixes[module], strlen(prefixes[module])) != 0) module++;
    if (module == count) return;
    pthread_mutex_lock(&lock);
    if (!tried[module]) {
        tried[module] = 1;
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/vips-%s.%s", osprey_module_dir, modules[module], G_MODULE_SUFFIX);
        // A missing module is not an error: the operation stays missing and the caller says so.
        // A loaded module stays loaded for the life of the process, as libvips' own are.
        if (n > 0 && (size_t)n < sizeof path && g_file_test(path, G_FILE_TEST_EXISTS)) {
            GModule *handle = g_module_open(path, G_MODULE_BIND_LAZY);
            if (handle) g_module_make_resident(handle);
        }
    }
    pthread_mutex_unlock(&lock);
}
