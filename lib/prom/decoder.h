/* Prometheus XOR decoder internals that the tests reach. */
#ifndef TSCHUNK_PROM_DECODER_H
#define TSCHUNK_PROM_DECODER_H

#include <stddef.h>
#include <stdint.h>

/* Which loops decode samples 2..: the tests run each on the same chunks and compare. */
enum {
    TSC_PROM_LOOPS_AUTO,    /* unchecked where the chunk has room (BMI2 twin when the CPU has it), checked after */
    TSC_PROM_LOOPS_CHECKED, /* the bounds-checked loop only */
    TSC_PROM_LOOPS_SCALAR   /* as AUTO, without the BMI2 twin */
};

/* tschunk_prom_decode with the loops chosen. */
size_t tsc_prom_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops);

#endif
