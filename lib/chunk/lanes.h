/* Codec 1's lane decoders (lib/chunk/lanes512.c, lanes_avx2.c), called by tschunk_decode_chunks (iterator.c). */
#ifndef TSCHUNK_CHUNK_LANES_H
#define TSCHUNK_CHUNK_LANES_H

#include "../common/common.h"

/* What a constant (elided) stream's lane reads: zeros, a `0` field a step (dod 0, value unchanged). */
#define TSC_CHUNK_LANE_ZEROS (TSCHUNK_MAX_SAMPLES / 8 + 64)
extern const uint8_t tsc_chunk_lane_zeros[TSC_CHUNK_LANE_ZEROS];

/* One codec-1 chunk in the kernel: its two streams, decode state and where its next samples go. */
typedef struct {
    const uint8_t *tbase, *vbase; /* the timestamp and value streams (tsc_chunk_lane_zeros when constant) */
    uint64_t tlast, vlast;        /* each stream's length - 32, signed: past it a fetch reads the rest, then zeros */
    uint64_t tpos, vpos, delta, bits;
    int64_t ts;
    uint32_t lead, width, bad;
    int64_t *ts_out;
    uint64_t *bits_out;
} tsc_chunk_lane;

/* A kernel's lane state stored from its registers, a field's lanes in a row (8 lanes at most). */
typedef struct {
    uint64_t tpos[8], vpos[8], delta[8], ts[8], bits[8], lead[8], width[8];
} tsc_chunk_lane_rows;

/* Lanes 0 .. count - 1 back into their structs; `bad` (a bit a lane) is or-ed in. */
static inline void tsc_chunk_lanes_put(tsc_chunk_lane *l, int count, const tsc_chunk_lane_rows *r, unsigned bad)
{
    for (int k = 0; k < count; k++) {
        l[k].tpos = r->tpos[k];
        l[k].vpos = r->vpos[k];
        l[k].delta = r->delta[k];
        l[k].ts = (int64_t)r->ts[k];
        l[k].bits = r->bits[k];
        l[k].lead = (uint32_t)r->lead[k];
        l[k].width = (uint32_t)r->width[k];
    }
    for (int k = 0; bad && k < count; k++) l[k].bad |= (bad >> k) & 1; /* rare: not read otherwise */
}

/*
 * Up to n samples of each of 8 (or 16) codec-1 chunks past their first two samples, one of each per step,
 * into the lanes' outputs, each output moved past them; past a stream's end it reads zeros, as the checked
 * scalar loop does (the caller checks the positions against the lengths). Stops before a step in which a
 * lane meets a 64-bit dod (*escaped set): the caller takes that step with the scalar loop.
 * `bad` is set for a field no encoder writes or time going back, as the scalar loop sets it.
 * @return the steps done.
 */
size_t tsc_chunk_lanes8_avx512(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped);
size_t tsc_chunk_lanes16_avx512(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped);
/* The same two with AVX2 (lanes_avx2.c): sets of four lanes. */
size_t tsc_chunk_lanes8_avx2(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped);
size_t tsc_chunk_lanes16_avx2(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped);

#endif
