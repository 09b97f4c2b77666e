/*
 * Portable roaring blobs (CRoaring's portable serialization, the layout in roaring_check.c) written and read
 * here rather than by CRoaring: Debian's 0.2.66 aborts or crashes when an allocation fails inside it (an
 * assert in run_container_grow, a NULL store in roaring_bitmap_add), where a segment call must return
 * ALLOCATION. The blobs are CRoaring's bytes: the tests compare both ways against it.
 */
#ifndef TSCHUNK_SEGMENT_BITMAP_H
#define TSCHUNK_SEGMENT_BITMAP_H

#include "../common/common.h"

/* Values first .. last (inclusive). */
typedef struct {
    uint32_t first, last;
} tsc_run;

/* The blob of the values in runs[0 .. n) (ascending, disjoint, not adjacent): CRoaring's bytes for those values
 * added one by one, then run_optimize. size: its length; write: writes it, @return its length. */
size_t tsc_bitmap_size(const tsc_run *runs, size_t n);
size_t tsc_bitmap_write(uint8_t *out, const tsc_run *runs, size_t n);

/* The runs of a blob that tsc_roaring_check accepted, in ascending order (an array's values one a run, not
 * joined; a run container's as they are; a bitset's maximal within its container). */
typedef struct {
    const uint8_t *data;
    const uint8_t *header, *run_flags; /* run_flags NULL: no run containers */
    size_t pos;                        /* the current container's data */
    uint32_t count, index;             /* containers, and the current one */
    uint32_t within;                   /* next item in the current container: value, run or bit */
} tsc_bitmap_iter;

void tsc_bitmap_iter_init(tsc_bitmap_iter *it, const uint8_t *blob);
/* @return 1 and the next run, or 0 at the end. */
int tsc_bitmap_next_run(tsc_bitmap_iter *it, tsc_run *run);

#endif
