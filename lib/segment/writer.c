/*
 * Segment writer (format v3): chunk records streamed to a temporary file, the index and
 * the series table kept in memory (bounded by the number of chunks and
 * series, not their bytes), metadata and footer at finish, then fsync and
 * rename so the final path never holds a torn file. Or, through the caller's
 * tschunk_segment_io, the same bytes at the same offsets, nothing committed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sketch/sketch.h"
#include "bitmap.h"
#include "durable.h"
#include "format.h"

typedef struct {
    uint64_t id;
    char *name;
    size_t name_len;
} series_entry;

typedef struct {
    uint64_t series_id;
    uint32_t count;
    int64_t first_ts, last_ts;
    uint64_t offset, length;
    uint64_t hash; /* XXH3 of the record */
} chunk_entry;

struct tschunk_segment_writer {
    tschunk_segment_io io; /* the temporary file's (tsc_file_write_at, tsc_file_read_at), or the caller's */
    tsc_file_io file;      /* a path's temporary file; file.out NULL through the caller's io */
    char *tmp_path, *final_path;
    tschunk_segment_options opts;
    uint64_t pos;
    chunk_entry *chunks;
    size_t nchunks, chunks_cap;
    series_entry *series;
    size_t nseries, series_cap;
    uint32_t *table; /* series by id: positions in `series` plus 1 (0: empty), open addressing, at most half full */
    size_t table_cap;
    uint32_t *names; /* named series by name, the same way: a name is one series' */
    size_t names_cap, nnamed;
    /* With summaries: every chunk's summary is merged into it at add_chunk, which proves that its sketch decodes
     * with the segment's mapping (verify's check), whether or not a block summary covers the chunk. */
    tschunk_sketch *summary_check;
    int failed;
};

static void *wr_alloc(tschunk_segment_writer *w, size_t size)
{
    return w->opts.allocator.alloc(w->opts.allocator.opaque, size);
}

static void wr_free(tschunk_segment_writer *w, void *p)
{
    if (p) w->opts.allocator.free(w->opts.allocator.opaque, p);
}

/* Grow an array by the allocator (no realloc hook): a copy into a block twice the size. */
static int grow(tschunk_segment_writer *w, void **arr, size_t *cap, size_t elem)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    void *n = wr_alloc(w, ncap * elem);
    if (!n) return -1;
    if (*arr) {
        memcpy(n, *arr, *cap * elem);
        wr_free(w, *arr);
    }
    *arr = n;
    *cap = ncap;
    return 0;
}

static char *dup_str(tschunk_segment_writer *w, const char *s, size_t n)
{
    char *d = wr_alloc(w, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* The temporary file as a tschunk_segment_io: stdio's buffer for the records written in order, a seek only for
 * the header, and pread (after a flush) for the summaries read back. */
static int put_bytes(tschunk_segment_writer *w, const void *p, size_t n)
{
    if (n && !w->failed && w->io.write_at(w->io.ctx, p, n, w->pos)) w->failed = 1;
    w->pos += n;
    return w->failed ? -1 : 0;
}

/* Header: magic, version, flags, codec family, summary mapping, min_ts, gamma, offset, unit, the log2 of the
 * records per records hash (v3), reserved zeros, XXH3 of the 40 bytes before it. */
static void encode_header(const tschunk_segment_options *o, unsigned group_shift, uint8_t h[TSC_SEG_HEADER_SIZE])
{
    memset(h, 0, TSC_SEG_HEADER_SIZE);
    memcpy(h, TSC_SEG_MAGIC, 4);
    h[4] = TSC_SEG_VERSION;
    h[6] = TSCHUNK_CODEC_GORILLA;
    h[7] = o->has_summaries ? (uint8_t)o->summary_mapping : TSC_SEG_NO_SUMMARY;
    tsc_store64_le(h + 8, (uint64_t)o->min_ts);
    tsc_store64_le(h + 16, o->has_summaries ? tsc_bits_of(o->summary_gamma) : 0);
    tsc_store64_le(h + 24, o->has_summaries ? tsc_bits_of(o->summary_offset) : 0);
    h[TSC_SEG_UNIT_AT] = (uint8_t)o->ts_unit;
    h[TSC_SEG_GROUP_AT] = (uint8_t)group_shift;
    tsc_store64_le(h + 40, tsc_xxh3(h, 40));
}

/* opts NULL: these (no summaries, min_ts 0, malloc and free). */
static const tschunk_segment_options default_options;

/* A summary mapping the header can hold and a reader can build (it wrote kind 99, or gamma 0, as they came). */
static int options_ok(const tschunk_segment_options *o)
{
    tsc_mapping m;
    return (unsigned)o->ts_unit <= TSCHUNK_UNIT_NS && o->summary_block_chunks <= TSC_SEG_MAX_SUMMARY_BLOCK &&
           (!o->has_summaries || !tsc_mapping_from_gamma(&m, o->summary_mapping, o->summary_gamma, o->summary_offset));
}

static tschunk_segment_writer *new_writer(const tschunk_segment_options *o)
{
    tschunk_allocator a = tsc_allocator_or_default(&o->allocator);
    tschunk_segment_writer *w = a.alloc(a.opaque, sizeof *w);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    w->opts = *o;
    w->opts.allocator = a;
    tschunk_sketch_options so = {o->summary_mapping, 0, 0, 0, a, 0};
    if (o->has_summaries && tschunk_sketch_create_mapping(&w->summary_check, o->summary_mapping, o->summary_gamma,
                                                          o->summary_offset, &so)) {
        a.free(a.opaque, w);
        return NULL;
    }
    return w;
}

/* The header as create writes it: the records' group size is known at finish, which writes it again. */
static size_t start_records(tschunk_segment_writer *w)
{
    uint8_t h[TSC_SEG_HEADER_SIZE];
    encode_header(&w->opts, 0, h);
    return put_bytes(w, h, sizeof h) ? TSC_ERROR(GENERIC) : 0;
}

size_t tschunk_segment_writer_create_io(tschunk_segment_writer **out, const tschunk_segment_io *io,
                                        const tschunk_segment_options *o)
{
    if (!o) o = &default_options;
    if (!out || !io || !io->write_at || !io->read_at || !options_ok(o)) return TSC_ERROR(BAD_PARAMETER);
    tschunk_segment_writer *w = new_writer(o);
    if (!w) return TSC_ERROR(ALLOCATION);
    w->io = *io;
    size_t err = start_records(w);
    if (err) {
        tschunk_segment_writer_abort(w);
        return err;
    }
    *out = w;
    return 0;
}

size_t tschunk_segment_writer_create(tschunk_segment_writer **out, const char *path, const tschunk_segment_options *o)
{
    if (!o) o = &default_options;
    if (!out || !path || !*path || !options_ok(o)) return TSC_ERROR(BAD_PARAMETER);
    tschunk_segment_writer *w = new_writer(o);
    if (!w) return TSC_ERROR(ALLOCATION);
    size_t n = strlen(path);
    w->final_path = dup_str(w, path, n);
    w->tmp_path = wr_alloc(w, n + TSC_TEMP_SUFFIX);
    if (w->tmp_path) w->tmp_path[0] = 0; /* no name yet: abort removes none (it removed what the heap held) */
    if (!w->final_path || !w->tmp_path) {
        tschunk_segment_writer_abort(w);
        return TSC_ERROR(ALLOCATION);
    }
    w->file.out = tsc_create_temp(path, path, w->tmp_path, n + TSC_TEMP_SUFFIX); /* read too: for the summaries */
    if (!w->file.out) {
        w->tmp_path[0] = 0; /* not this writer's to remove */
        tschunk_segment_writer_abort(w);
        return TSC_ERROR(GENERIC);
    }
    w->io = (tschunk_segment_io){tsc_file_write_at, tsc_file_read_at, &w->file};
    size_t err = start_records(w);
    if (err) {
        tschunk_segment_writer_abort(w);
        return err;
    }
    *out = w;
    return 0;
}

/* At finish, last: the header with the group size, over the one create wrote. */
static int write_header(tschunk_segment_writer *w, unsigned shift)
{
    uint8_t h[TSC_SEG_HEADER_SIZE];
    encode_header(&w->opts, shift, h);
    return w->io.write_at(w->io.ctx, h, sizeof h, 0) ? -1 : 0;
}

/* The table slot of id: its series', or the empty one where it would go. */
static size_t slot_of(const tschunk_segment_writer *w, uint64_t id)
{
    size_t mask = w->table_cap - 1, i = (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
    while (w->table[i] && w->series[w->table[i] - 1].id != id) i = (i + 1) & mask;
    return i;
}

/* An open-addressing table (series positions plus 1) replaced by an empty one twice the size, for a rehash. */
static int renew_table(tschunk_segment_writer *w, uint32_t **table, size_t *cap)
{
    size_t ncap = *cap ? 2 * *cap : 128;
    uint32_t *fresh = wr_alloc(w, ncap * sizeof *fresh);
    if (!fresh) return -1;
    memset(fresh, 0, ncap * sizeof *fresh);
    wr_free(w, *table);
    *table = fresh;
    *cap = ncap;
    return 0;
}

static int grow_table(tschunk_segment_writer *w)
{
    if (renew_table(w, &w->table, &w->table_cap)) return -1;
    for (size_t k = 0; k < w->nseries; k++) w->table[slot_of(w, w->series[k].id)] = (uint32_t)(k + 1);
    return 0;
}

/* A hash table, not a scan: 10,000 series added in order cost the scan 50 M compares (0.43.0). */
static series_entry *find_or_add_series(tschunk_segment_writer *w, uint64_t id)
{
    size_t at = w->table_cap ? slot_of(w, id) : 0;
    if (w->table_cap && w->table[at]) return &w->series[w->table[at] - 1];
    if (2 * (w->nseries + 1) > w->table_cap && grow_table(w)) return NULL;
    if (w->nseries == w->series_cap && grow(w, (void **)&w->series, &w->series_cap, sizeof *w->series)) return NULL;
    series_entry *s = &w->series[w->nseries++];
    memset(s, 0, sizeof *s);
    s->id = id;
    w->table[slot_of(w, id)] = (uint32_t)w->nseries;
    return s;
}

/* The names slot of a name: its series', or the empty one where it would go. */
static size_t name_slot(const tschunk_segment_writer *w, const char *name, size_t len)
{
    size_t mask = w->names_cap - 1, i = (size_t)tsc_xxh3(name, len) & mask;
    for (const series_entry *s; w->names[i]; i = (i + 1) & mask)
        if (s = &w->series[w->names[i] - 1], s->name_len == len && !memcmp(s->name, name, len)) break;
    return i;
}

static int grow_names(tschunk_segment_writer *w)
{
    if (renew_table(w, &w->names, &w->names_cap)) return -1;
    for (size_t k = 0; k < w->nseries; k++) {
        const series_entry *s = &w->series[k];
        if (s->name_len) w->names[name_slot(w, s->name, s->name_len)] = (uint32_t)(k + 1);
    }
    return 0;
}

/* A series is named once, and a name names one series: readers find a series by its name (the CLI's cat, merges by
 * name), so a second series of the same name would be found or merged in its place. An empty name is no name. */
size_t tschunk_segment_writer_add_series(tschunk_segment_writer *w, uint64_t id, const char *name, size_t name_len)
{
    if (!w || (!name && name_len) || name_len > TSC_SEG_MAX_NAME) return TSC_ERROR(BAD_PARAMETER);
    uint32_t holder = name_len && w->names_cap ? w->names[name_slot(w, name, name_len)] : 0;
    if (holder) return w->series[holder - 1].id == id ? 0 : TSC_ERROR(BAD_PARAMETER); /* the same name again, or not */
    size_t at = w->table_cap ? slot_of(w, id) : 0;
    if (w->table_cap && w->table[at] && w->series[w->table[at] - 1].name_len) return TSC_ERROR(BAD_PARAMETER);
    /* Every allocation first: a refused call adds no series and no name. */
    char *copy = dup_str(w, name ? name : "", name_len);
    if (!copy || (name_len && 2 * (w->nnamed + 1) > w->names_cap && grow_names(w))) {
        wr_free(w, copy);
        return TSC_ERROR(ALLOCATION);
    }
    series_entry *s = find_or_add_series(w, id);
    if (!s) {
        wr_free(w, copy);
        return TSC_ERROR(ALLOCATION);
    }
    wr_free(w, s->name);
    s->name = copy;
    s->name_len = name_len;
    if (name_len) {
        w->names[name_slot(w, name, name_len)] = (uint32_t)(s - w->series + 1);
        w->nnamed++;
    }
    return 0;
}

/* Samples read at a time by tsc_seg_scan_chunk (2 KiB of stack): runs through the batch loops, where one
 * tschunk_iter_next_bits call a sample cost 6,100 instructions a 120-sample chunk, and runs 2,300 (0.45.1). */
#define SCAN_RUN 128

size_t tsc_seg_scan_chunk(const void *chunk, size_t size, uint32_t *count, int64_t *first, int64_t *last)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, chunk, size), n = 0;
    if (r) return r;
    int64_t ts[SCAN_RUN];
    double values[SCAN_RUN]; /* decoded too, and dropped: a chunk whose values do not decode is refused */
    while ((r = tschunk_iter_read(&it, ts, values, SCAN_RUN)) > 0 && !tsc_is_error(r)) {
        if (!n) *first = ts[0];
        *last = ts[r - 1];
        n += r;
    }
    if (tsc_is_error(r)) return r;
    *count = (uint32_t)n;
    return n ? 0 : TSC_ERROR(BAD_PARAMETER);
}

size_t tschunk_segment_writer_add_chunk(tschunk_segment_writer *w, uint64_t series_id, const void *chunk,
                                        size_t chunk_size, const void *summary, size_t summary_size)
{
    if (!w || !chunk || (!summary && summary_size)) return TSC_ERROR(BAD_PARAMETER);
    if (!w->opts.has_summaries != !summary_size) return TSC_ERROR(BAD_PARAMETER); /* records hold one, or none */
    uint32_t count = 0;
    int64_t first = 0, last = 0;
    size_t err = tsc_seg_scan_chunk(chunk, chunk_size, &count, &first, &last);
    if (err) return err;
    if (first < w->opts.min_ts) return TSC_ERROR(BAD_PARAMETER);
    tschunk_summary_info si; /* a summary must be one of this chunk, its sketch of the segment's mapping */
    if (summary_size && (tschunk_summary_parse(summary, summary_size, &si) || si.count != count ||
                         (count != si.nan_count && (si.first_ts != first || si.last_ts != last))))
        return TSC_ERROR(BAD_PARAMETER);
    if (summary_size) {
        tschunk_sketch_clear(w->summary_check);
        err = tschunk_summary_merge(w->summary_check, summary, summary_size);
        if (err) return err;
    }
    /* The chunk's room first: a series added for a chunk that is then refused would be an empty one. */
    if (w->nchunks == w->chunks_cap && grow(w, (void **)&w->chunks, &w->chunks_cap, sizeof *w->chunks))
        return TSC_ERROR(ALLOCATION);
    if (!find_or_add_series(w, series_id)) return TSC_ERROR(ALLOCATION);
    /* Record (v3): the summary's length and bytes when the segment has summaries, then the chunk, whose length
     * the index gives. Series, times, count and codec are the index's and the chunk header's. */
    uint8_t slen[10];
    size_t sl = w->opts.has_summaries ? tsc_put_uvarint(slen, summary_size) : 0;
    uint64_t offset = w->pos;
    tsc_span parts[3] = {{slen, sl}, {summary, summary_size}, {chunk, chunk_size}};
    for (size_t i = 0; i < 3; i++) put_bytes(w, parts[i].data, parts[i].size);
    if (w->failed) return TSC_ERROR(GENERIC);
    w->chunks[w->nchunks++] =
        (chunk_entry){series_id, count, first, last, offset, w->pos - offset, tsc_xxh3_spans(parts, 3)};
    return 0;
}

void tschunk_segment_writer_abort(tschunk_segment_writer *w)
{
    if (!w) return;
    int failed = errno; /* a failure's reason outlives the clean-up (the removal of a name already gone) */
    if (w->file.out) fclose(w->file.out);
    if (w->tmp_path && w->tmp_path[0]) remove(w->tmp_path);
    for (size_t i = 0; i < w->nseries; i++) wr_free(w, w->series[i].name);
    wr_free(w, w->series);
    wr_free(w, w->table);
    wr_free(w, w->names);
    wr_free(w, w->chunks);
    wr_free(w, w->tmp_path);
    wr_free(w, w->final_path);
    tschunk_sketch_free(w->summary_check);
    wr_free(w, w);
    errno = failed;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const series_entry *)a)->id, y = ((const series_entry *)b)->id;
    return (x > y) - (x < y);
}

/* An index entry and its record's hash, sorted together. */
typedef struct {
    tsc_seg_entry e;
    uint64_t hash;
} sorted_entry;

/* Index order: series, then first timestamp, then position in the file. Ties do not occur. */
static int by_series_time(const void *a, const void *b)
{
    const tsc_seg_entry *x = &((const sorted_entry *)a)->e, *y = &((const sorted_entry *)b)->e;
    if (x->ordinal != y->ordinal) return x->ordinal < y->ordinal ? -1 : 1;
    if (x->first_ts != y->first_ts) return x->first_ts < y->first_ts ? -1 : 1;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* qsort, unless the elements are in order already, as a merge or a compaction adds them: glibc's merge sort
 * spends n log n compares on sorted input too (about 650 instructions a chunk at 10,000 chunks, 0.45.1). */
static void sort_unless_sorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *at = base;
    for (size_t i = 1; i < n; i++)
        if (cmp(at + (i - 1) * size, at + i * size) > 0) {
            qsort(base, n, size, cmp);
            return;
        }
}

static uint32_t ordinal_of(const tschunk_segment_writer *w, uint64_t id)
{
    size_t lo = 0, hi = w->nseries;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->series[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

/* Series bitmap: the ordinals that hold chunks (entries are in ordinal order), as a portable roaring blob in
 * the bytes CRoaring writes for it (values added one by one, then run_optimize). */
static uint8_t *encode_series_bitmap(tschunk_segment_writer *w, const tsc_seg_entry *entries, size_t *len)
{
    tsc_run *runs = wr_alloc(w, (w->nchunks + 1) * sizeof *runs);
    if (!runs) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < w->nchunks; i++) {
        uint32_t ordinal = entries[i].ordinal;
        if (n && ordinal <= runs[n - 1].last) continue; /* the series' next chunk */
        if (n && ordinal == runs[n - 1].last + 1) runs[n - 1].last = ordinal;
        else runs[n++] = (tsc_run){ordinal, ordinal};
    }
    *len = tsc_bitmap_size(runs, n);
    uint8_t *blob = wr_alloc(w, *len);
    if (blob) tsc_bitmap_write(blob, runs, n);
    wr_free(w, runs);
    return blob;
}

/* Series table, index and fences, encoded into one buffer (they are in memory already). */
typedef struct {
    uint8_t *buf;
    size_t series_len, index_len, fence_len;
} metadata;

/* Fences: per block of 64 series (then of 64 index entries) its first key, its byte offset in its
 * section and the XXH3 of its bytes, so that a lazy reader checks and parses only the blocks it reads. */
static uint8_t *put_fences(uint8_t *p, const uint8_t *section, size_t len, const size_t *offsets,
                           const uint64_t *keys, size_t items)
{
    size_t blocks = tsc_seg_blocks(items);
    for (size_t b = 0; b < blocks; b++) {
        size_t from = offsets[b], to = b + 1 < blocks ? offsets[b + 1] : len;
        tsc_seg_put_fence(p, keys[b], from, tsc_xxh3(section + from, to - from));
        p += TSC_SEG_FENCE_SIZE;
    }
    return p;
}

/* Records per records hash (log2): as many as fit in about 32 KB, so that reading one chunk hashes about
 * that much whatever the chunks' size (one record when they are bigger), at most a block's 64. */
static unsigned records_group_shift(const tschunk_segment_writer *w)
{
    uint64_t record_bytes = w->nchunks ? (w->pos - TSC_SEG_HEADER_SIZE) / w->nchunks : 1;
    unsigned shift = 0;
    while (shift < TSC_SEG_MAX_GROUP_SHIFT && (record_bytes << (shift + 1)) <= TSC_SEG_GROUP_BYTES) shift++;
    return shift;
}

/* Index entry (v3): a flag byte saying which fields differ from the previous entry of the block
 * (TSC_SEG_ORD_*, TSC_SEG_NEW_*), those fields, then the record's length. Entries of one series or of
 * aligned series written in order cost a flag byte and a length. */
static size_t put_entry(uint8_t *out, const tsc_seg_entry *prev, const tsc_seg_entry *e, int64_t min_ts)
{
    uint32_t prev_ord = prev ? prev->ordinal : 0, prev_count = prev ? prev->count : 0;
    uint64_t prev_span = prev ? (uint64_t)prev->last_ts - (uint64_t)prev->first_ts : 0;
    uint64_t prev_end = prev ? prev->offset + prev->length : TSC_SEG_HEADER_SIZE;
    uint64_t span = (uint64_t)e->last_ts - (uint64_t)e->first_ts, ord_delta = e->ordinal - prev_ord;
    uint8_t flags = ord_delta == 0 ? TSC_SEG_ORD_SAME : ord_delta == 1 ? TSC_SEG_ORD_NEXT : TSC_SEG_ORD_DELTA;
    size_t n = 1;
    if (ord_delta > 1) n += tsc_put_uvarint(out + n, ord_delta);
    uint64_t predicted = tsc_seg_predicted_first(prev, e->ordinal, min_ts);
    uint64_t first_zz = tsc_zigzag((int64_t)((uint64_t)e->first_ts - predicted));
    uint64_t span_zz = tsc_zigzag((int64_t)(span - prev_span)); /* jittered scrapes: spans differ by a few units */
    if (first_zz && span_zz && first_zz < 16 && span_zz < 16) {
        flags |= TSC_SEG_SMALL_JITTER;
        out[n++] = (uint8_t)(first_zz | span_zz << 4);
    } else {
        if (first_zz) flags |= TSC_SEG_NEW_FIRST, n += tsc_put_uvarint(out + n, first_zz);
        if (span_zz) flags |= TSC_SEG_NEW_SPAN, n += tsc_put_uvarint(out + n, span_zz);
    }
    if (e->count != prev_count) {
        flags |= TSC_SEG_NEW_COUNT;
        n += tsc_put_uvarint(out + n, e->count);
    }
    if (e->offset != prev_end) {
        flags |= TSC_SEG_NEW_AT;
        n += tsc_put_uvarint(out + n, tsc_zigzag((int64_t)(e->offset - prev_end)));
    }
    n += tsc_put_uvarint(out + n, e->length);
    out[0] = flags;
    return n;
}

/* Series record (v3): uvarint id minus the previous id of the block (the block's first: the id), uvarint
 * name length, name. */
static size_t put_series(uint8_t *out, uint64_t prev_id, const series_entry *s)
{
    size_t n = tsc_put_uvarint(out, s->id - prev_id);
    n += tsc_put_uvarint(out + n, s->name_len);
    memcpy(out + n, s->name ? s->name : "", s->name_len);
    return n + s->name_len;
}

/* Index block (v3): its entries, then one u64 records hash per group of 2^shift of them (the last group
 * may be short): tsc_seg_records_hash of the group's records' XXH3s. */
static uint8_t *put_index_block(uint8_t *p, const tsc_seg_entry *entries, const uint64_t *hashes, size_t n,
                                unsigned shift, int64_t min_ts)
{
    for (size_t k = 0; k < n; k++) p += put_entry(p, k ? &entries[k - 1] : NULL, &entries[k], min_ts);
    for (size_t k = 0; k < n; k += (size_t)1 << shift, p += 8) {
        size_t size = n - k < ((size_t)1 << shift) ? n - k : (size_t)1 << shift;
        tsc_store64_le(p, tsc_seg_records_hash(hashes + k, size));
    }
    return p;
}

static int encode_metadata(tschunk_segment_writer *w, const tsc_seg_entry *entries, const uint64_t *hashes,
                           unsigned shift, metadata *m)
{
    size_t cap = 0, nsb = tsc_seg_blocks(w->nseries), nblocks = nsb + tsc_seg_blocks(w->nchunks);
    for (size_t i = 0; i < w->nseries; i++) cap += 20 + w->series[i].name_len;
    cap += w->nchunks * (64 + 8) + nblocks * TSC_SEG_FENCE_SIZE + 1;
    uint8_t *buf = wr_alloc(w, cap), *p = buf;
    size_t *offsets = wr_alloc(w, (nblocks + 1) * sizeof *offsets);
    uint64_t *keys = wr_alloc(w, (nblocks + 1) * sizeof *keys);
    if (!buf || !offsets || !keys) {
        wr_free(w, buf);
        wr_free(w, offsets);
        wr_free(w, keys);
        return -1;
    }
    for (size_t i = 0; i < w->nseries; i++) {
        size_t b = i / TSC_SEG_BLOCK;
        if (i % TSC_SEG_BLOCK == 0) offsets[b] = (size_t)(p - buf), keys[b] = w->series[i].id;
        p += put_series(p, i % TSC_SEG_BLOCK ? w->series[i - 1].id : 0, &w->series[i]);
    }
    m->series_len = (size_t)(p - buf);
    uint8_t *index = p;
    for (size_t i = 0; i < w->nchunks; i += TSC_SEG_BLOCK) {
        size_t b = nsb + i / TSC_SEG_BLOCK, n = w->nchunks - i < TSC_SEG_BLOCK ? w->nchunks - i : TSC_SEG_BLOCK;
        offsets[b] = (size_t)(p - index), keys[b] = entries[i].ordinal;
        p = put_index_block(p, entries + i, hashes + i, n, shift, w->opts.min_ts);
    }
    m->index_len = (size_t)(p - index);
    p = put_fences(p, buf, m->series_len, offsets, keys, w->nseries);
    put_fences(p, index, m->index_len, offsets + nsb, keys + nsb, w->nchunks);
    m->fence_len = nblocks * TSC_SEG_FENCE_SIZE;
    m->buf = buf;
    wr_free(w, offsets);
    wr_free(w, keys);
    return 0;
}

void tsc_seg_put_fence(uint8_t *out, uint64_t key, uint64_t offset, uint64_t hash)
{
    tsc_store64_le(out, key);
    tsc_store64_le(out + 8, offset);
    tsc_store64_le(out + 16, hash);
}

size_t tsc_seg_encode_footer(const tsc_seg_footer *f, uint8_t out[TSC_SEG_FOOTER_SIZE])
{
    memset(out, 0, TSC_SEG_FOOTER_SIZE);
    const uint64_t v1[8] = {f->series_off, f->series_len, f->index_off, f->index_len,
                            f->bitmap_off, f->bitmap_len, f->tomb_off, f->tomb_len};
    const uint64_t v2[12] = {f->series_off, f->series_len, f->index_off,  f->index_len,  f->fence_off, f->fence_len,
                             f->blocks_off, f->blocks_len, f->bitmap_off, f->bitmap_len, f->tomb_off,  f->tomb_len};
    int v1_layout = f->version == 1, pairs = v1_layout ? 8 : 12;
    for (int i = 0; i < pairs; i++) tsc_store64_le(out + 8 * i, v1_layout ? v1[i] : v2[i]);
    uint8_t *p = out + 8 * pairs;
    tsc_store64_le(p, (uint64_t)f->chunks | (uint64_t)f->series << 32);
    if (v1_layout) {
        tsc_store64_le(p + 8, f->meta_hash);
        memcpy(p + 16, TSC_SEG_FOOTER_MAGIC_V1, 8);
        tsc_store64_le(p + 24, tsc_xxh3(out, 88));
        return TSC_SEG_FOOTER_V1_SIZE;
    }
    tsc_store64_le(p + 8, f->samples);
    tsc_store64_le(p + 16, f->meta_hash);
    tsc_store64_le(p + 24, f->lazy_hash);
    memcpy(p + 32, f->version == 2 ? TSC_SEG_FOOTER_MAGIC_V2 : TSC_SEG_FOOTER_MAGIC, 8);
    tsc_store64_le(p + 40, tsc_xxh3(out, TSC_SEG_FOOTER_SIZE - 8));
    return TSC_SEG_FOOTER_SIZE;
}

/* The chunk records' index entries and their hashes, sorted by (series ordinal, time). @return 0, or -1 (memory). */
static int sorted_entries(tschunk_segment_writer *w, tsc_seg_entry **entries, uint64_t **hashes)
{
    sorted_entry *sorted = wr_alloc(w, (w->nchunks + 1) * sizeof *sorted);
    *entries = wr_alloc(w, (w->nchunks + 1) * sizeof **entries);
    *hashes = wr_alloc(w, (w->nchunks + 1) * sizeof **hashes);
    if (!sorted || !*entries || !*hashes) {
        wr_free(w, sorted);
        wr_free(w, *entries);
        wr_free(w, *hashes);
        return -1;
    }
    for (size_t i = 0; i < w->nchunks; i++) {
        const chunk_entry *c = &w->chunks[i];
        uint32_t ordinal = ordinal_of(w, c->series_id);
        sorted[i].e = (tsc_seg_entry){ordinal, c->count, c->first_ts, c->last_ts, c->offset, c->length};
        sorted[i].hash = c->hash;
    }
    sort_unless_sorted(sorted, w->nchunks, sizeof *sorted, by_series_time);
    for (size_t i = 0; i < w->nchunks; i++) (*entries)[i] = sorted[i].e, (*hashes)[i] = sorted[i].hash;
    wr_free(w, sorted);
    return 0;
}

/* The footer's section offsets: the sections follow the chunk records (which end at w->pos) in file order. */
static tsc_seg_footer footer_of(const tschunk_segment_writer *w, const metadata *m, size_t blocks_len,
                                size_t bitmap_len)
{
    tsc_seg_footer f = {0};
    f.version = TSC_SEG_VERSION;
    f.series_off = w->pos;
    f.series_len = m->series_len;
    f.index_off = f.series_off + m->series_len;
    f.index_len = m->index_len;
    f.fence_off = f.index_off + m->index_len;
    f.fence_len = m->fence_len;
    f.blocks_off = f.fence_off + m->fence_len;
    f.blocks_len = blocks_len;
    f.bitmap_off = f.blocks_off + blocks_len;
    f.bitmap_len = bitmap_len;
    f.tomb_off = f.bitmap_off + bitmap_len; /* no deletions yet: an empty section */
    f.chunks = (uint32_t)w->nchunks;
    f.series = (uint32_t)w->nseries;
    return f;
}

size_t tschunk_segment_writer_finish(tschunk_segment_writer *w)
{
    if (!w) return TSC_ERROR(BAD_PARAMETER);
    sort_unless_sorted(w->series, w->nseries, sizeof *w->series, by_id);
    tsc_seg_entry *entries;
    uint64_t *hashes, samples = 0;
    if (sorted_entries(w, &entries, &hashes)) {
        tschunk_segment_writer_abort(w);
        return TSC_ERROR(ALLOCATION);
    }
    for (size_t i = 0; i < w->nchunks; i++) samples += entries[i].count;
    size_t bitmap_len = 0, blocks_len = 0;
    uint8_t *blocks = NULL;
    size_t err = w->failed ? TSC_ERROR(GENERIC) : tsc_seg_build_blocks(&w->io, entries, w->nchunks, &w->opts,
                                                                      &blocks, &blocks_len);
    metadata m = {0};
    unsigned shift = records_group_shift(w); /* of the records alone: before the metadata moves w->pos */
    int ok = !err && encode_metadata(w, entries, hashes, shift, &m) == 0;
    uint8_t *bitmap = ok ? encode_series_bitmap(w, entries, &bitmap_len) : NULL;
    wr_free(w, entries);
    wr_free(w, hashes);
    if (!bitmap) {
        if (ok) wr_free(w, m.buf);
        wr_free(w, blocks);
        tschunk_segment_writer_abort(w);
        return err ? err : TSC_ERROR(ALLOCATION);
    }
    tsc_seg_footer f = footer_of(w, &m, blocks_len, bitmap_len);
    f.samples = samples;
    size_t meta_len = m.series_len + m.index_len + m.fence_len;
    tsc_span meta_parts[3] = {{m.buf, meta_len}, {blocks, blocks_len}, {bitmap, bitmap_len}};
    f.meta_hash = tsc_xxh3_spans(meta_parts, 3);
    meta_parts[0] = (tsc_span){m.buf + f.fence_off - f.series_off, m.fence_len};
    f.lazy_hash = tsc_xxh3_spans(meta_parts, 3);
    put_bytes(w, m.buf, meta_len);
    put_bytes(w, blocks, blocks_len);
    put_bytes(w, bitmap, bitmap_len);
    wr_free(w, m.buf);
    wr_free(w, blocks);
    wr_free(w, bitmap);
    uint8_t footer[TSC_SEG_FOOTER_SIZE];
    put_bytes(w, footer, tsc_seg_encode_footer(&f, footer));
    uint64_t size = w->pos;
    if (!w->failed && write_header(w, shift)) w->failed = 1;
    ok = !w->failed;
    if (ok && w->file.out) { /* the commit closes the file either way; on a write error abort closes it */
        ok = tsc_commit_file(w->file.out, w->tmp_path, w->final_path) == 0;
        w->file.out = NULL;
        w->tmp_path[0] = 0; /* renamed or removed: the name may be another writer's by now */
    }
    tschunk_segment_writer_abort(w); /* frees */
    return ok ? (size_t)size : TSC_ERROR(GENERIC);
}
