/* Prometheus XOR decoder internals that the tests reach. */
#ifndef TSCHUNK_PROM_DECODER_H
#define TSCHUNK_PROM_DECODER_H

#include "../common/common.h"

/* tschunk_prom_decode with the loops chosen (TSC_LOOPS_*, lib/common/common.h). */
size_t tsc_prom_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops);

/* tschunk_prom_decode_chunks with the loops chosen; TSC_LOOPS_CHECKED decodes chunk by chunk. */
size_t tsc_prom_decode_chunks_with(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                   double *values, size_t capacity, int loops);

/* Test hook: the iterator steps one sample at a time from here on, never decoding a run ahead (until init). */
void tsc_prom_iter_step_only(tschunk_prom_iter *it);

/* One chunk in tsc_prom_lanes8_avx512: its stream, decode state and where its next samples go. */
typedef struct {
    const uint8_t *base; /* the bit stream (after the count) */
    uint64_t last_byte;  /* the stream's length - 32, signed: past it a fetch reads what is left, then zeros */
    uint64_t pos, delta, bits;
    int64_t ts;
    uint32_t lead, width, bad;
    int64_t *ts_out;
    uint64_t *bits_out;
} tsc_prom_lane;

/* A kernel's lane state stored from its registers, a field's lanes in a row (8 lanes at most). */
typedef struct {
    uint64_t pos[8], delta[8], ts[8], bits[8], lead[8], width[8];
} tsc_prom_lane_rows;

/* Lanes 0 .. count - 1 back into their structs; `bad` (a bit a lane) is or-ed in. */
static inline void tsc_prom_lanes_put(tsc_prom_lane *l, int count, const tsc_prom_lane_rows *r, unsigned bad)
{
    for (int k = 0; k < count; k++) {
        l[k].pos = r->pos[k];
        l[k].delta = r->delta[k];
        l[k].ts = (int64_t)r->ts[k];
        l[k].bits = r->bits[k];
        l[k].lead = (uint32_t)r->lead[k];
        l[k].width = (uint32_t)r->width[k];
    }
    for (int k = 0; bad && k < count; k++) l[k].bad |= (bad >> k) & 1; /* rare: not read otherwise */
}

/*
 * Up to n samples of each of eight chunks (past their first two samples), one of each per step, into the
 * lanes' outputs, each output moved past them; past a stream's end it reads zeros, as the checked scalar
 * loop does (the caller checks the positions against the lengths). Stops before a step in which a lane
 * meets a 64-bit dod (*escaped set): the caller takes that step with the scalar loop. @return the steps done.
 */
size_t tsc_prom_lanes8_avx512(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped);
/* The same with sixteen chunks, two sets of eight lanes side by side. */
size_t tsc_prom_lanes16_avx512(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped);
/* The same two with AVX2 (lanes_avx2.c): sets of four lanes. */
size_t tsc_prom_lanes8_avx2(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped);
size_t tsc_prom_lanes16_avx2(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped);

#endif
