/*
 * Segment format v1: constants and the helpers the writer and the reader share.
 * The layout is specified once, in README "Segment format v1".
 */
#ifndef TSCHUNK_SEGMENT_FORMAT_H
#define TSCHUNK_SEGMENT_FORMAT_H

#include <stdio.h>

#include "../common/common.h"

#define TSC_SEG_MAGIC "TSEG"
#define TSC_SEG_FOOTER_MAGIC "TSEGEND1"
#define TSC_SEG_VERSION 1u
#define TSC_SEG_HEADER_SIZE 48u
#define TSC_SEG_FOOTER_SIZE 96u
#define TSC_SEG_NO_SUMMARY 0xffu
#define TSC_SEG_MAX_NAME 4096u
#define TSC_SEG_UNIT_AT 32u /* header byte: timestamp unit (tschunk_ts_unit) */

/* XXH3-64 (xxHash 0.8, compiled inline in checksum.c: no XXH symbol is exported). */
uint64_t tsc_xxh3(const void *data, size_t size);

/* XXH3-64 of several buffers taken in order, as if concatenated. */
typedef struct {
    const void *data;
    size_t size;
} tsc_span;
uint64_t tsc_xxh3_spans(const tsc_span *spans, size_t n);

/* Open flag honoured only in fuzzing builds: skip checksum comparisons so that
 * mutated inputs reach the parsers behind them. */
#define TSC_SEG_FUZZ_SKIP_CHECKSUMS 0x80000000u
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define TSC_SEG_CHECKSUM_OK(flags, a, b) (((flags) & TSC_SEG_FUZZ_SKIP_CHECKSUMS) || (a) == (b))
#else
#define TSC_SEG_CHECKSUM_OK(flags, a, b) ((a) == (b))
#endif

/* One index entry, as the reader holds it in memory. */
typedef struct {
    uint32_t ordinal, count;
    int64_t first_ts, last_ts;
    uint64_t offset, length; /* the record */
} tsc_seg_entry;

/* Footer fields (all u64 LE, then the magic and two checksums). */
typedef struct {
    uint64_t series_off, series_len, index_off, index_len, bitmap_off, bitmap_len, tomb_off, tomb_len;
    uint32_t chunks, series;
    uint64_t meta_hash;
} tsc_seg_footer;

/* One chunk's deleted sample positions: a validated portable roaring blob in place. */
typedef struct {
    uint32_t chunk, deleted;
    const uint8_t *blob;
    size_t size;
} tsc_seg_tomb;

/* An open segment (reader.c); delete.c rewrites its tail. */
struct tschunk_segment {
    const uint8_t *data;
    size_t size;
    tschunk_allocator allocator;
    tschunk_segment_info info;
    tsc_seg_footer footer;
    uint64_t *series_ids;
    const char **names;
    size_t *name_lens;
    tsc_seg_entry *entries;
    int64_t *max_last; /* running max of last_ts within each series: binary search stays exact */
    tsc_seg_tomb *tombs; /* sorted by chunk */
    size_t ntombs;
    size_t records_end;
    unsigned flags;
};

/* Parse and validate the tombstone section into s->tombs (at open, after the index). */
size_t tsc_seg_parse_tombs(tschunk_segment *s);

/* The tombstone of chunk i, or NULL. */
const tsc_seg_tomb *tsc_seg_find_tomb(const tschunk_segment *s, size_t chunk);

/* The 96-byte footer of f (its own checksum included). */
void tsc_seg_encode_footer(const tsc_seg_footer *f, uint8_t out[TSC_SEG_FOOTER_SIZE]);

/* Flush, fsync, close and rename tmp to final. @return 0 or -1 (the temporary file is then removed). */
int tsc_seg_commit_file(FILE *out, const char *tmp, const char *final_path);

#endif
