/* The segment reader with its checksums on: what production code runs. */
#define SEGMENT_OPEN_FLAGS 0u
#include "fuzz_segment_read.c"
