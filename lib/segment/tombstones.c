/*
 * Deleted samples. A segment's records never change; tschunk_segment_delete
 * (delete.c) records deleted sample positions per chunk as roaring bitmaps in
 * the tombstone section, and every read here leaves them out.
 *
 * Tombstone section: per chunk with deletions, by ascending index position:
 * uvarint index position, uvarint blob length, portable roaring blob of the
 * deleted sample positions (each < the chunk's count, at least one).
 */
#include "../sketch/sketch.h"
#include "bitmap.h"
#include "format.h"
#include "roaring_check.h"

size_t tsc_seg_parse_tombs(tschunk_segment *s)
{
    const uint8_t *p = s->data + s->footer.tomb_off;
    size_t size = (size_t)s->footer.tomb_len, pos = 0;
    if (!size) return 0;
    /* An entry takes >= 10 bytes (two uvarints and an 8-byte empty-bitmap header). */
    s->tombs = s->allocator.alloc(s->allocator.opaque, (size / 10 + 1) * sizeof *s->tombs);
    if (!s->tombs) return TSC_ERROR(ALLOCATION);
    while (pos < size) {
        uint64_t chunk, len;
        size_t n = tsc_get_uvarint(p + pos, size - pos, &chunk);
        size_t m = n ? tsc_get_uvarint(p + pos + n, size - pos - n, &len) : 0;
        if (!m) return TSC_ERROR(CORRUPT);
        pos += n + m;
        if (chunk >= s->info.chunks || len > size - pos || (s->ntombs && chunk <= s->tombs[s->ntombs - 1].chunk))
            return TSC_ERROR(CORRUPT);
        tsc_roaring_summary rs;
        if (tsc_roaring_check(p + pos, (size_t)len, &rs) || rs.bytes != len || rs.cardinality == 0 ||
            (!s->lazy && rs.max_value >= s->entries[chunk].count)) /* lazy: checked when the chunk is read */
            return TSC_ERROR(CORRUPT);
        s->tombs[s->ntombs++] =
            (tsc_seg_tomb){(uint32_t)chunk, (uint32_t)rs.cardinality, rs.max_value, p + pos, (size_t)len};
        s->info.deleted += rs.cardinality;
        pos += (size_t)len;
    }
    return 0;
}

/* The first tombstone of a chunk at or after `chunk` (ntombs when none). */
static size_t first_tomb_from(const tschunk_segment *s, size_t chunk)
{
    size_t lo = 0, hi = s->ntombs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->tombs[mid].chunk < chunk) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const tsc_seg_tomb *tsc_seg_find_tomb(const tschunk_segment *s, size_t chunk)
{
    size_t t = first_tomb_from(s, chunk);
    return t < s->ntombs && s->tombs[t].chunk == chunk ? &s->tombs[t] : NULL;
}

int tsc_seg_any_tomb(const tschunk_segment *s, size_t first, size_t count)
{
    size_t t = first_tomb_from(s, first);
    return t < s->ntombs && s->tombs[t].chunk < first + count;
}

/* Drop the positions in the tomb (validated: each < n, at open or, lazy, when its chunk is read) from
 * ts/values[0, n). @return the samples kept. */
static size_t drop_deleted(const tsc_seg_tomb *tomb, int64_t *ts, double *values, size_t n)
{
    tsc_bitmap_iter it;
    tsc_bitmap_iter_init(&it, tomb->blob);
    tsc_run gone;
    size_t kept = 0, from = 0;
    while (tsc_bitmap_next_run(&it, &gone) && gone.first < n) {
        memmove(ts + kept, ts + from, (gone.first - from) * sizeof *ts);
        memmove(values + kept, values + from, (gone.first - from) * sizeof *values);
        kept += gone.first - from;
        from = (size_t)gone.last + 1;
    }
    if (from < n) {
        memmove(ts + kept, ts + from, (n - from) * sizeof *ts);
        memmove(values + kept, values + from, (n - from) * sizeof *values);
        kept += n - from;
    }
    return kept;
}

/* Chunk i's samples without its deleted ones, from its info c (already read: not read again). */
static size_t decode_live(const tschunk_segment *s, size_t i, const tschunk_segment_chunk_info *c, int64_t *ts,
                          double *values, size_t capacity)
{
    size_t n = tschunk_decode(c->ref.chunk, c->ref.chunk_size, ts, values, capacity);
    if (tsc_is_error(n)) return n;
    if (n != c->count) return TSC_ERROR(CORRUPT);
    const tsc_seg_tomb *tomb = c->deleted ? tsc_seg_find_tomb(s, i) : NULL;
    return tomb ? drop_deleted(tomb, ts, values, n) : n;
}

size_t tschunk_segment_decode(const tschunk_segment *s, size_t i, int64_t *ts, double *values, size_t capacity)
{
    tschunk_segment_chunk_info c;
    size_t err = tschunk_segment_chunk(s, i, &c);
    return err ? err : decode_live(s, i, &c, ts, values, capacity);
}

/* Scratch for the chunks with deletions, sized by the largest chunk met (not TSCHUNK_MAX_SAMPLES: 1 MiB a query,
 * mapped and unmapped by malloc at each call, was most of such a query's time). */
typedef struct {
    int64_t *ts;
    double *values;
    size_t capacity;
} live_scratch;

/* A caller's allocator need not take NULL. */
static void release_scratch(const tschunk_segment *s, live_scratch *scratch)
{
    if (scratch->ts) s->allocator.free(s->allocator.opaque, scratch->ts);
    if (scratch->values) s->allocator.free(s->allocator.opaque, scratch->values);
    *scratch = (live_scratch){NULL, NULL, 0};
}

static size_t reserve_scratch(const tschunk_segment *s, live_scratch *scratch, size_t count)
{
    if (scratch->ts && count <= scratch->capacity) return 0;
    size_t capacity = count < 1024 ? 1024 : count;
    release_scratch(s, scratch);
    scratch->ts = s->allocator.alloc(s->allocator.opaque, capacity * sizeof *scratch->ts);
    scratch->values = s->allocator.alloc(s->allocator.opaque, capacity * sizeof *scratch->values);
    scratch->capacity = scratch->ts && scratch->values ? capacity : 0;
    return scratch->capacity ? 0 : TSC_ERROR(ALLOCATION);
}

/* A chunk with deletions: decoded (without them) into scratch, its values in range (one stretch: the samples are
 * in time order) added by the batch add, as merge_decoded (summary.c) adds a chunk without deletions. */
static size_t merge_live(const tschunk_segment *s, size_t i, const tschunk_segment_chunk_info *c, int64_t from,
                         int64_t to, tschunk_sketch *acc, tschunk_range_stats *st, const live_scratch *scratch)
{
    const int64_t *ts = scratch->ts;
    size_t n = decode_live(s, i, c, scratch->ts, scratch->values, scratch->capacity);
    if (tsc_is_error(n)) return n;
    size_t first = 0, end;
    while (first < n && ts[first] < from) first++;
    for (end = first; end < n && ts[end] <= to; end++) {}
    tsc_sketch_add_values(acc, scratch->values + first, end - first, &st->nan_count, &st->inf_count);
    st->samples_decoded += end - first;
    st->chunks_decoded++;
    return 0;
}

static void add_stats(tschunk_range_stats *st, const tschunk_range_stats *one)
{
    st->chunks_from_summaries += one->chunks_from_summaries;
    st->chunks_decoded += one->chunks_decoded;
    st->chunks_skipped += one->chunks_skipped;
    st->samples_decoded += one->samples_decoded;
    st->nan_count += one->nan_count;
    st->inf_count += one->inf_count;
}

/* Chunk infos read in runs (a lazy open parses an index block once a run, not once a chunk). */
#define INFO_RUN 16
typedef struct {
    tschunk_segment_chunk_info info[INFO_RUN];
    size_t first, count;
} info_run;

/* Chunk i's info, from the run or a new run from i that stops before `stop`: the chunks a stored block summary
 * may answer for are not touched (their records' checksums not computed). */
static size_t info_at(const tschunk_segment *s, info_run *run, size_t i, size_t stop,
                      const tschunk_segment_chunk_info **out)
{
    if (i - run->first >= run->count) {
        size_t n = stop - i < INFO_RUN ? stop - i : INFO_RUN, err = tschunk_segment_chunks(s, i, n, run->info);
        run->first = i;
        run->count = err ? 0 : n;
        if (err) return err;
    }
    *out = &run->info[i - run->first];
    return 0;
}

/* The index positions to visit: one series' chunks overlapping the range, or all chunks. */
static size_t positions(const tschunk_segment *s, uint32_t ordinal, int64_t from, int64_t to, size_t *begin,
                        size_t *end)
{
    if (ordinal != TSCHUNK_SEGMENT_ALL_SERIES) return tschunk_segment_range(s, ordinal, from, to, begin, end);
    *begin = 0;
    *end = s->info.chunks;
    return 0;
}

/* A stored block summary that answers for its chunks: none deleted, and one series. Inside the positions of one
 * series (the index is sorted by series) that holds without reading the block's first and last entries, which a
 * lazy open would parse from their index blocks at every block. */
static int block_usable(const tschunk_segment *s, const tsc_seg_block *block, uint32_t ordinal)
{
    if (ordinal == TSCHUNK_SEGMENT_ALL_SERIES) return tsc_seg_block_usable(s, block);
    return !tsc_seg_any_tomb(s, block->first, block->count);
}

size_t tschunk_segment_range_merge(const tschunk_segment *s, uint32_t ordinal, int64_t from, int64_t to,
                                   tschunk_sketch *acc, tschunk_range_stats *stats)
{
    tschunk_range_stats local;
    tschunk_range_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    size_t begin, end, err;
    if (!s || !acc || (err = positions(s, ordinal, from, to, &begin, &end))) return TSC_ERROR(BAD_PARAMETER);
    live_scratch scratch = {NULL, NULL, 0};
    info_run run = {.count = 0};
    size_t next_block = tsc_seg_first_block_from(s, begin); /* blocks are sorted: one search, then a cursor */
    for (size_t i = begin; i < end && !err; i++) {
        /* A stored block summary answers for its chunks without touching them (blocks.c). */
        while (next_block < s->nblocks && s->blocks[next_block].first < i) next_block++;
        const tsc_seg_block *block =
            next_block < s->nblocks && s->blocks[next_block].first == i ? &s->blocks[next_block] : NULL;
        if (block && block->count <= end - i && block_usable(s, block, ordinal) &&
            tsc_summary_take_block(acc, block->blob, block->size, block->count, from, to, st)) {
            i += block->count - 1;
            continue;
        }
        size_t after = next_block + (block != NULL), stop = after < s->nblocks ? s->blocks[after].first : end;
        const tschunk_segment_chunk_info *c;
        if ((err = info_at(s, &run, i, stop < end ? stop : end, &c))) break;
        if (c->last_ts < from || c->first_ts > to) {
            st->chunks_skipped++;
            continue;
        }
        if (!c->deleted) {
            tschunk_range_stats one;
            err = tschunk_range_merge(acc, &c->ref, 1, from, to, &one);
            add_stats(st, &one);
            continue;
        }
        if (!(err = reserve_scratch(s, &scratch, c->count)))
            err = merge_live(s, i, c, from, to, acc, st, &scratch);
    }
    release_scratch(s, &scratch);
    return err;
}
