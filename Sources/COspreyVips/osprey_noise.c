// thumbor's noise filter draws one random() per pixel after srandom(seed); random_r() on a state
// of our own gives the same sequence without touching the process's generator (other threads).
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>

#include "osprey_vips.h"

int osprey_noise_offsets(unsigned int seed, int amount, signed char *out, size_t count) {
    if (amount < 1 || amount > 255) return -1;
    // glibc's default generator: TYPE_3, a 128-byte state, as srandom() uses.
    char state[128];
    struct random_data data;
    memset(&data, 0, sizeof data);
    if (initstate_r(seed, state, sizeof state, &data) != 0) return -1;
    for (size_t i = 0; i < count; i++) {
        int32_t value = 0;
        random_r(&data, &value);
        out[i] = (signed char)(value % amount - (amount >> 1));
    }
    return 0;
}
