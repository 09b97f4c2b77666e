/*
 * Validation of CRoaring portable blobs before they reach roaring (see
 * roaring_check.c for the layout and what is checked).
 */
#ifndef TSCHUNK_ROARING_CHECK_H
#define TSCHUNK_ROARING_CHECK_H

#include "../common/common.h"

typedef struct {
    uint64_t cardinality; /* values in the bitmap */
    uint32_t max_value;   /* largest value; 0 when empty */
    size_t bytes;         /* length of the blob (it may be followed by other data) */
} tsc_roaring_summary;

/* @return 0, or TRUNCATED, BAD_MAGIC (not a portable cookie), CORRUPT. */
size_t tsc_roaring_check(const void *blob, size_t size, tsc_roaring_summary *out);

#endif
