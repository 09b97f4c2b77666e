/*
 * The README's format text against the library on arbitrary bytes: the decoders written from the README alone
 * (tests/spec_decoders.h, codec 1 and codec 2) and tschunk_decode must refuse the same inputs and read the rest to
 * the same samples, bit for bit. tests/test_spec*.c hold them to that on golden chunks and their single-bit flips;
 * this goes wherever the fuzzer leads.
 */
#include <string.h>

#include "../tests/spec_decoders.h"
#include "harness.h"
#include "tschunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int64_t spec_ts[SPEC_MAX], lib_ts[SPEC_MAX];
    static uint64_t spec_bits[SPEC_MAX];
    static double lib_values[SPEC_MAX];
    long n = size >= 2 && (data[1] & 0x0f) == 2 ? spec2_decode(data, size, spec_ts, spec_bits, SPEC_MAX)
                                                : spec_decode(data, size, spec_ts, spec_bits, SPEC_MAX);
    if (n == -2) return 0; /* neither codec */
    size_t got = tschunk_decode(data, size, lib_ts, lib_values, SPEC_MAX);
    if ((n >= 0) != !tschunk_is_error(got)) __builtin_trap();
    if (n < 0) return 0;
    if ((size_t)n != got) __builtin_trap();
    for (long i = 0; i < n; i++) {
        uint64_t lib_bits;
        memcpy(&lib_bits, &lib_values[i], 8);
        if (spec_ts[i] != lib_ts[i] || spec_bits[i] != lib_bits) __builtin_trap();
    }
    return 0;
}
