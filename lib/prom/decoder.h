/* Prometheus XOR decoder internals that the tests reach. */
#ifndef TSCHUNK_PROM_DECODER_H
#define TSCHUNK_PROM_DECODER_H

#include "../common/common.h"

/* tschunk_prom_decode with the loops chosen (TSC_LOOPS_*, lib/common/common.h). */
size_t tsc_prom_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops);

/* tschunk_prom_decode_chunks with the loops chosen; TSC_LOOPS_CHECKED decodes chunk by chunk. */
size_t tsc_prom_decode_chunks_with(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                   double *values, size_t capacity, int loops);

#endif
