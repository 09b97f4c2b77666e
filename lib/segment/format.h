/*
 * Segment format v3 (v1 and v2 still read): constants and the helpers the writer and
 * the reader share. The layout is specified once, in README "Segment format".
 */
#ifndef TSCHUNK_SEGMENT_FORMAT_H
#define TSCHUNK_SEGMENT_FORMAT_H

#include <stdatomic.h>
#include <stdio.h>

#include "../common/common.h"

#define TSC_SEG_MAGIC "TSEG"
#define TSC_SEG_FOOTER_MAGIC_V1 "TSEGEND1"
#define TSC_SEG_FOOTER_MAGIC_V2 "TSEGEND2"
#define TSC_SEG_FOOTER_MAGIC "TSEGEND3"
#define TSC_SEG_VERSION 3u /* written; versions 1 and 2 are still read */
#define TSC_SEG_HEADER_SIZE 48u
#define TSC_SEG_FOOTER_V1_SIZE 96u
#define TSC_SEG_FOOTER_SIZE 144u
#define TSC_SEG_BLOCK 64u      /* series, or index entries, per fence (v2) */
#define TSC_SEG_FENCE_SIZE 24u /* one fence: u64 key, u64 byte offset, u64 XXH3 of the block */
#define TSC_SEG_SUMMARY_BLOCK 64u /* chunks per stored block summary unless the writer is told otherwise */
#define TSC_SEG_MAX_SUMMARY_BLOCK 4096u
#define TSC_SEG_NO_SUMMARY 0xffu
#define TSC_SEG_MAX_NAME 4096u
#define TSC_SEG_UNIT_AT 32u /* header byte: timestamp unit (tschunk_ts_unit) */
#define TSC_SEG_GROUP_AT 33u /* v3 header byte: log2 of the records per records hash (0-6) */
#define TSC_SEG_MAX_GROUP_SHIFT 6u
#define TSC_SEG_GROUP_BYTES 32768u /* the writer groups about this many record bytes per hash */

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

/* Footer fields (v1 has no fences, samples or lazy hash). */
typedef struct {
    unsigned version;
    uint64_t series_off, series_len, index_off, index_len, fence_off, fence_len, blocks_off, blocks_len, bitmap_off,
        bitmap_len, tomb_off, tomb_len;
    uint32_t chunks, series;
    uint64_t samples, meta_hash, lazy_hash;
} tsc_seg_footer;

/* Footer size of a version. */
TSC_INLINE size_t tsc_seg_footer_size(unsigned version)
{
    return version == 1 ? TSC_SEG_FOOTER_V1_SIZE : TSC_SEG_FOOTER_SIZE;
}

/* Fences (v2): ceil(series / 64) series fences, then ceil(chunks / 64) index fences. */
TSC_INLINE size_t tsc_seg_blocks(size_t items) { return (items + TSC_SEG_BLOCK - 1) / TSC_SEG_BLOCK; }

/* Index entry flags (v3): how each field follows from the previous entry of its 64-entry block (the
 * block's first entry follows from ordinal 0, first_ts = min_ts, span 0, count 0, a record ending at the
 * header's end). first_ts is coded against a prediction: the previous entry's first_ts when the series
 * changes (aligned series), its last_ts plus its mean step when it does not (the next chunk of a series). */
#define TSC_SEG_ORD_SAME 0u     /* bits 0-1: the previous entry's ordinal */
#define TSC_SEG_ORD_NEXT 1u     /*           the previous ordinal + 1 */
#define TSC_SEG_ORD_DELTA 2u    /*           uvarint (ordinal - previous) follows */
#define TSC_SEG_NEW_FIRST 0x04u /* zigzag varint (first_ts - predicted first_ts) follows, else equal */
#define TSC_SEG_NEW_SPAN 0x08u  /* zigzag varint (span - previous span) follows, else equal; span = last - first */
#define TSC_SEG_NEW_COUNT 0x10u /* uvarint count follows, else the previous count */
#define TSC_SEG_NEW_AT 0x20u    /* zigzag varint (offset - previous record's end) follows, else 0 */
/* Both the first_ts and the span differences, zigzagged, in one byte (low nibble, high nibble) after the
 * ordinal's field: scrape jitter of a few units. Never with NEW_FIRST or NEW_SPAN. */
#define TSC_SEG_SMALL_JITTER 0x40u

/* A stored block summary (v2): chunks [first, first + count) of one series, combined. */
typedef struct {
    uint32_t first, count;
    const uint8_t *blob;
    size_t size;
} tsc_seg_block;

/* One chunk's deleted sample positions: a validated portable roaring blob in place. */
typedef struct {
    uint32_t chunk, deleted, last; /* last: the highest deleted position */
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
    tsc_seg_block *blocks; /* sorted by first chunk, disjoint */
    size_t nblocks;
    size_t records_end;
    unsigned flags;
    int lazy;               /* v2+ opened with TSCHUNK_SEGMENT_LAZY: no arrays, blocks parsed when read */
    const uint8_t *fences;  /* v2+: in place */
    unsigned group_shift; /* v3: log2 of the records per records hash */
    size_t *hashes_at;    /* v3, full open: where each index block's records hashes start in the index */
    /* v3: one bit per group of records whose hash has been checked. Set at most once per bit, with atomic
     * ORs, so that an open segment stays safe to share between threads (two may both check a group). */
    _Atomic uint64_t *records_checked;
    /* Lazy: each index block's largest last_ts, once a call has parsed the block (TSC_SEG_MAX_UNKNOWN before),
     * so that a range walk passes over the blocks that end before its start without parsing them again. A
     * relaxed atomic store of what the block's checked bytes say: threads that race store the same value. */
    _Atomic int64_t *block_max_last;
    void *mapping;          /* tschunk_segment_open_file: the file's mapping (data), unmapped by close */
    size_t mapping_size;
};

/* Unmap what tschunk_segment_open_file mapped (file.c: the POSIX half of the reader). */
void tsc_seg_unmap(void *mapping, size_t size);

#define TSC_SEG_MAX_UNKNOWN INT64_MIN /* a block whose largest last_ts really is INT64_MIN is parsed each time */

/* Count, first and last timestamp of a native chunk, decoding every sample (the writer's check of a chunk
 * it is given, verify's of a chunk against its index entry). @return 0, its decode error, BAD_PARAMETER (empty). */
size_t tsc_seg_scan_chunk(const void *chunk, size_t size, uint32_t *count, int64_t *first, int64_t *last);

/* Where the writer puts one fence. */
void tsc_seg_put_fence(uint8_t *out, uint64_t key, uint64_t offset, uint64_t hash);

/* One series-table record, name in place. */
typedef struct {
    uint64_t id;
    const char *name;
    size_t name_len;
} tsc_seg_series;

/* Parse the n records of one series-table block / the n entries of one index block (the block's first at *pos)
 * of p[0, size) (advances *pos): every field checked against the segment (ids ascending within the block,
 * ordinal, counts, record bounds, timestamps). v3 codes each from the previous record of its block. @return 0 or
 * CORRUPT. */
size_t tsc_seg_parse_series(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos,
                            tsc_seg_series *out, size_t n);
size_t tsc_seg_parse_entries(const tschunk_segment *s, const uint8_t *p, size_t size, size_t *pos,
                             tsc_seg_entry *out, size_t n);
/* v3: XXH3 of the per-record XXH3s of a group of n (<= 64) records, as the index stores it. */
uint64_t tsc_seg_records_hash(const uint64_t *record_hashes, size_t n);
/* v3: the records hashes that end an index block of n >= 1 entries (one u64 per group of 2^group_shift),
 * at *pos of an index section of `size` bytes: their offset in *at, *pos moved past them. @return 0 or CORRUPT. */
TSC_INLINE size_t tsc_seg_take_block_hashes(const tschunk_segment *s, size_t size, size_t *pos, size_t n, size_t *at)
{
    size_t bytes = (((n - 1) >> s->group_shift) + 1) * 8;
    if (*pos > size || bytes > size - *pos) return TSC_ERROR(CORRUPT);
    *at = *pos;
    *pos += bytes;
    return 0;
}

/* v3: the mean step of a chunk of `count` samples spanning `span`, after whose end the next chunk of its series is
 * predicted to start. */
TSC_INLINE uint64_t tsc_seg_mean_step(uint64_t span, uint64_t count) { return count > 1 ? span / (count - 1) : 0; }

/* v3: the first_ts an entry of ordinal `ordinal` is coded against, after prev (NULL: a block's first). The reader's
 * block loop (reader.c, parse_entries_v3) keeps the same prediction from its locals. */
TSC_INLINE uint64_t tsc_seg_predicted_first(const tsc_seg_entry *prev, uint64_t ordinal, int64_t min_ts)
{
    if (!prev) return (uint64_t)min_ts;
    if (prev->ordinal != ordinal) return (uint64_t)prev->first_ts;
    uint64_t span = (uint64_t)prev->last_ts - (uint64_t)prev->first_ts;
    return (uint64_t)prev->last_ts + tsc_seg_mean_step(span, prev->count);
}

/* Index order: by series, then first timestamp. */
TSC_INLINE int tsc_seg_entries_in_order(const tsc_seg_entry *prev, const tsc_seg_entry *e)
{
    return prev->ordinal < e->ordinal || (prev->ordinal == e->ordinal && prev->first_ts <= e->first_ts);
}

/* Fences (fences.c): fence b of the series table (index_kind 0) or of the index (1). */
const uint8_t *tsc_seg_fence(const tschunk_segment *s, int index_kind, size_t b);
/* At a lazy open: keys and offsets in order and inside their sections. */
size_t tsc_seg_check_fences(const tschunk_segment *s);
/* Block b, hash checked, parsed and checked against its fences: *n records (<= 64). */
size_t tsc_seg_series_block(const tschunk_segment *s, size_t b, tsc_seg_series out[TSC_SEG_BLOCK], size_t *n);
size_t tsc_seg_index_block(const tschunk_segment *s, size_t b, tsc_seg_entry out[TSC_SEG_BLOCK], size_t *n,
                           const uint8_t **hashes);
/* verify: every block's hash. */
size_t tsc_seg_check_block_hashes(const tschunk_segment *s);

/* Parse and validate the block summary section into s->blocks (at open). */
size_t tsc_seg_parse_blocks(tschunk_segment *s);
/* writer: the block summary section of entries (index order), summaries read back through io. */
size_t tsc_seg_build_blocks(const tschunk_segment_io *io, const tsc_seg_entry *entries, size_t n,
                            const tschunk_segment_options *o, uint8_t **out, size_t *len);
/* The first stored block whose first chunk is at or after `first` (nblocks when none). */
size_t tsc_seg_first_block_from(const tschunk_segment *s, size_t first);
/* A block a range query may take: none of its chunks has deletions, and (lazy) it holds one series. */
int tsc_seg_block_usable(const tschunk_segment *s, const tsc_seg_block *b);
/* Index entry i, from the arrays or (lazy) from its block. */
size_t tsc_seg_entry_at(const tschunk_segment *s, size_t i, tsc_seg_entry *out);
/* verify: every block summary is the combination of its chunks' summaries. */
size_t tsc_seg_check_blocks(const tschunk_segment *s);
/* Does any chunk in [first, first + count) have deleted samples? */
int tsc_seg_any_tomb(const tschunk_segment *s, size_t first, size_t count);

/* Parse and validate the tombstone section into s->tombs (at open, after the index). */
size_t tsc_seg_parse_tombs(tschunk_segment *s);

/* The tombstone of chunk i, or NULL. */
const tsc_seg_tomb *tsc_seg_find_tomb(const tschunk_segment *s, size_t chunk);

/* The footer of f in f->version's layout (its own checksum included). @return its size. */
size_t tsc_seg_encode_footer(const tsc_seg_footer *f, uint8_t out[TSC_SEG_FOOTER_SIZE]);


#endif
