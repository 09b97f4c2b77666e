/* Shared by the libFuzzer harnesses and their gcc replay build. */
#ifndef TSCHUNK_FUZZ_HARNESS_H
#define TSCHUNK_FUZZ_HARNESS_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
