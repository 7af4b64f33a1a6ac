// zlib (apt: zlib1g-dev, a dependency of libvips-dev): the CRC-32 the test origin's PNG mutations fix up.
#include <zlib.h>
