/* The walk over a list of chunks shared by tschunk_decode_chunks and tschunk_prom_decode_chunks. */
#ifndef TSCHUNK_CHUNK_LIST_H
#define TSCHUNK_CHUNK_LIST_H

#include "common.h"

/* A chunk's declared sample count (header only), or an error. */
typedef size_t (*tsc_count_fn)(const void *chunk, size_t size);

/* Chunks i to i + per_call - 1 (those below n_chunks) into ts/values. @return samples written or an error. */
typedef size_t (*tsc_decode_some_fn)(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks,
                                    int64_t *ts, double *values, int loops);

/*
 * Counts every chunk first (DST_TOO_SMALL before anything is decoded), then
 * decodes them per_call at a time (SIZE_MAX: all in one call), each chunk's samples after the previous one's.
 * @return the total number of samples or the first error.
 */
size_t tsc_decode_chunk_list(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                             double *values, size_t capacity, int loops, tsc_count_fn count, size_t per_call,
                             tsc_decode_some_fn some);

#endif
