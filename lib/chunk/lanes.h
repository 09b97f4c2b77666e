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
