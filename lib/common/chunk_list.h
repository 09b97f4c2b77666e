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

/*
 * A list of chunks decoded in SIMD lanes, a lane taking the list's next chunk when its own ends: the
 * scheduling shared by both formats, which supply how a chunk starts in a lane, how a lane is checked and
 * finished, and the kernel. Chunks start in list order, so each one's samples go after the previous one's.
 */
#define TSC_LIST_LANES 16 /* two sets of 8 */
typedef struct tsc_lane_list tsc_lane_list;
typedef struct {
    /* Chunk j (its samples from ts + at on) into slot: 1 when it takes the lanes, 0 when it was decoded
     * whole (too short, or faster without them), or an error. Sets *count to its samples. */
    size_t (*start)(tsc_lane_list *L, size_t slot, size_t j, size_t at, size_t *count);
    /* An ended slot's lane state checked. @return 0 or an error. */
    size_t (*finish)(tsc_lane_list *L, size_t slot);
    /* The live slots' lane states checked, and the samples the lanes left decoded. @return 0 or an error. */
    size_t (*drain)(tsc_lane_list *L);
    void (*move)(tsc_lane_list *L, size_t to, size_t from);
    /* Slots L->live .. width - 1 made idle lanes: zeros read into a scratch (TSC_LANE_IDLE_STEPS at most). */
    void (*idle)(tsc_lane_list *L, size_t width);
    /* Up to n steps of slots 0 .. width - 1 (8 or 16), each lane's outputs moved past them; stops before a
     * step with a 64-bit dod in some lane (*escaped), which scalar_step takes. @return the steps done. */
    size_t (*kernel)(tsc_lane_list *L, size_t width, size_t n, int *escaped);
    void (*scalar_step)(tsc_lane_list *L, size_t width);
    size_t (*count)(const void *chunk, size_t size); /* a chunk's declared count, or an error */
} tsc_lane_ops;

/* Steps an idle lane may take in a call (its outputs go to a scratch of this many samples, and one more). */
#define TSC_LANE_IDLE_STEPS 128

struct tsc_lane_list {
    const void *const *chunks;
    const size_t *sizes;
    size_t n_chunks, next; /* the list, and its first chunk not started */
    int64_t *ts;
    double *values;
    size_t out; /* where the next chunk's samples go */
    int loops;
    size_t live;                 /* slots 0 .. live - 1 hold a chunk; the others are idle */
    size_t left[TSC_LIST_LANES];  /* samples a slot's chunk has left for the lanes */
    size_t count[TSC_LIST_LANES]; /* a slot's chunk's samples */
};

/* Chunks i .. n_chunks - 1 of L's list into its arrays. @return samples written or an error. */
size_t tsc_lane_list_decode(tsc_lane_list *L, size_t i, const tsc_lane_ops *ops);

#endif
