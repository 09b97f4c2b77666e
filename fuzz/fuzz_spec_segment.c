/*
 * The README's segment section against the library on arbitrary bytes: the reader written from the README alone
 * (tests/spec_segment.h) makes every checksum of the input right as far as its structure parses, then it and
 * tschunk_segment_verify must refuse the same inputs, and the library's reader must answer as the README reader
 * read the rest (series, entries, chunk bytes, samples without the deleted ones, bitmap). Checksums are real here:
 * what decides is the structure rules on both sides. tests/test_spec_segment.c does the same for flips of
 * library-written segments.
 */
#include <stdlib.h>
#include <string.h>

#include "../tests/spec_segment.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    uint8_t *p = malloc(size ? size : 1);
    if (!p) return 0;
    memcpy(p, data, size);
    specseg_rehash(p, size);
    specseg s;
    int rc = specseg_read(&s, p, size, SPECSEG_CHECK_HASHES);
    size_t lib = tschunk_segment_verify(p, size, NULL);
    if ((rc == 0) != (lib == 0)) __builtin_trap();
    if (rc == 0 && specseg_same_as_library(&s, p, size)) __builtin_trap();
    specseg_free(&s);
    free(p);
    return 0;
}
