#ifndef OSPREY_FUZZ_DRIVER_H
#define OSPREY_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer): runs `callback` on every input.
/// (Each target also exports LLVMFuzzerTestOneInput, which libFuzzer's own main, linked but unused, refers to.)
/// The targets call it from their own entry point, because SwiftPM renames an executable's `main`
/// (so that tests can link it), which hides libFuzzer's own `main`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// Calls LLVMFuzzerRunDriver (a C entry point, so that Swift needs no declaration of its own).
int osprey_fuzz_run(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size));

#endif
