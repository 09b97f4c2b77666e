/*
 * Chunk summaries: the encoder's attached sketch, the summary blob, and
 * range queries that merge summaries of whole chunks and decode only the
 * chunks that straddle the range's ends.
 *
 * Summary blob v1 (all integers LEB128 uvarints, as in the chunk header):
 *   byte 0      0xD1: magic nibble 0xD, version 1
 *   count       uvarint, samples in the chunk
 *   first_ts    zigzag uvarint (present when count >= 1)
 *   span        uvarint, last_ts - first_ts as an unsigned 64-bit number (when count >= 1)
 *   nan_count   uvarint, NaN values (stale markers included), not in the sketch
 *   inf_count   uvarint, infinities and values beyond the sketch's range, not in the sketch
 *   sketch      the rest: DDSketch compact encoding with the mapping block and
 *               exact COUNT/MIN/MAX/SUM (sketches-java's exact-statistics form)
 *
 * Block summary blob (summary blob version 2): the summaries of consecutive
 * chunks combined, for range queries that cover the whole block.
 *   byte 0      0xD2
 *   chunks      uvarint, chunks combined
 *   count       uvarint, samples in them (64-bit)
 *   first_ts    zigzag uvarint, the least first timestamp (when count >= 1)
 *   span        uvarint, greatest last timestamp - first_ts (when count >= 1)
 *   nan_count, inf_count, sketch: as in version 1, over all the chunks
 */
#include <math.h>

#include "sketch.h"

#define SUMMARY_MAGIC_VERSION 0xd1u
#define BLOCK_MAGIC_VERSION 0xd2u

void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n);

/* Codec 2 hands the summary its values a group (up to 128) at a time, when it flushes the group, codec 1
 * 128 at a time (held in the sketch's stage), in push order (lib/sketch/sketch.c, tsc_sketch_add_bits: the
 * sketch is the one adding them one by one builds). */
void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n)
{
    tsc_sketch_add_bits(enc->summary, bits, n, &enc->nan_count, &enc->inf_count);
}

size_t tschunk_encoder_set_summary(tschunk_encoder *enc, tschunk_sketch *sketch)
{
    if (!enc) return TSC_ERROR(BAD_PARAMETER);
    if (tschunk_encoder_count(enc)) return TSC_ERROR(STAGE); /* codec 2's count may lag in enc->count */
    if (sketch && sketch->bins_only) return TSC_ERROR(BAD_PARAMETER); /* a summary's statistics are exact */
    if (sketch) tschunk_sketch_clear(sketch);
    enc->summary = sketch;
    enc->nan_count = enc->inf_count = 0;
    enc->held = 0;
    return 0;
}

size_t tschunk_encoder_summary_bound(const tschunk_encoder *enc)
{
    return enc && enc->summary ? 1 + 5 + 10 + 10 + 10 + 10 + tschunk_sketch_encode_bound(enc->summary) : 0;
}

size_t tschunk_encoder_write_summary(const tschunk_encoder *enc, void *dst, size_t capacity)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    if (!enc->summary || enc->stage != 0xa5 /* finished */) return TSC_ERROR(STAGE);
    uint8_t head[1 + 5 + 10 + 10 + 10 + 10];
    size_t h = 0;
    head[h++] = SUMMARY_MAGIC_VERSION;
    h += tsc_put_uvarint(head + h, enc->count);
    if (enc->count) {
        h += tsc_put_uvarint(head + h, tsc_zigzag(enc->first_ts));
        h += tsc_put_uvarint(head + h, (uint64_t)enc->prev_ts - (uint64_t)enc->first_ts);
    }
    h += tsc_put_uvarint(head + h, enc->nan_count);
    h += tsc_put_uvarint(head + h, enc->inf_count);
    if (capacity < h) return TSC_ERROR(DST_TOO_SMALL);
    memcpy(dst, head, h);
    size_t n = tschunk_sketch_encode(enc->summary, (uint8_t *)dst + h, capacity - h, TSCHUNK_SKETCH_EXACT_STATS);
    return tsc_is_error(n) ? n : h + n;
}

static size_t read_field(const uint8_t *p, size_t size, size_t *pos, uint64_t *v)
{
    size_t n = tsc_get_uvarint(p + *pos, size - *pos, v);
    if (n == 0) return *pos + 10 > size ? TSC_ERROR(TRUNCATED) : TSC_ERROR(CORRUPT);
    *pos += n;
    return 0;
}

/* The fields of a summary blob of either version (version 1: one chunk, chunks = 1). */
typedef struct {
    uint64_t chunks, count, nan_count, inf_count;
    int64_t first_ts, last_ts;
    const uint8_t *sketch;
    size_t sketch_size;
} blob_fields;

static size_t parse_blob(const uint8_t *p, size_t size, unsigned version, blob_fields *f)
{
    memset(f, 0, sizeof *f);
    if (size < 1) return TSC_ERROR(TRUNCATED);
    if ((p[0] >> 4) != 0xd) return TSC_ERROR(BAD_MAGIC);
    if ((p[0] & 15) != version) return TSC_ERROR(BAD_VERSION);
    size_t pos = 1, err;
    uint64_t v;
    f->chunks = 1;
    if (version == 2 && (err = read_field(p, size, &pos, &f->chunks))) return err;
    if ((err = read_field(p, size, &pos, &f->count))) return err;
    if (version == 1 && f->count > TSCHUNK_MAX_SAMPLES) return TSC_ERROR(CORRUPT);
    if (f->count) {
        if ((err = read_field(p, size, &pos, &v))) return err;
        f->first_ts = tsc_unzigzag(v);
        if ((err = read_field(p, size, &pos, &v))) return err;
        if (v > (uint64_t)INT64_MAX - (uint64_t)f->first_ts) return TSC_ERROR(CORRUPT);
        f->last_ts = (int64_t)((uint64_t)f->first_ts + v);
    }
    if ((err = read_field(p, size, &pos, &f->nan_count)) || (err = read_field(p, size, &pos, &f->inf_count)))
        return err;
    if (f->nan_count > f->count || f->inf_count > f->count - f->nan_count) return TSC_ERROR(CORRUPT);
    f->sketch = p + pos;
    f->sketch_size = size - pos;
    return 0;
}

size_t tschunk_summary_parse(const void *blob, size_t size, tschunk_summary_info *info)
{
    if (!blob || !info) return TSC_ERROR(BAD_PARAMETER);
    blob_fields f;
    size_t err = parse_blob((const uint8_t *)blob, size, 1, &f);
    memset(info, 0, sizeof *info);
    if (err) return err;
    info->count = (uint32_t)f.count;
    info->first_ts = f.first_ts;
    info->last_ts = f.last_ts;
    info->nan_count = f.nan_count;
    info->inf_count = f.inf_count;
    info->sketch = f.sketch;
    info->sketch_size = f.sketch_size;
    return 0;
}

size_t tschunk_summary_merge(tschunk_sketch *acc, const void *blob, size_t size)
{
    tschunk_summary_info info;
    size_t err = tschunk_summary_parse(blob, size, &info);
    if (err) return err;
    return tschunk_sketch_decode_merge(acc, info.sketch, info.sketch_size, NULL);
}

/* Add the chunk's samples with from <= ts <= to: read in runs and added in bulk (the sketch one-by-one adds
 * build), where one iterator call and one tschunk_sketch_add a sample cost about 8 ns a sample (0.45.2). A chunk
 * that fails to decode within the run that holds the range's end is refused, where the old loop stopped at the end. */
static size_t merge_decoded(tschunk_sketch *acc, const tschunk_chunk_ref *c, int64_t from, int64_t to,
                            tschunk_range_stats *st)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, c->chunk, c->chunk_size);
    if (r) return r;
    if ((r = tschunk_iter_seek(&it, from)) != 1) return tsc_is_error(r) ? r : 0;
    int64_t ts[TSC_SKETCH_RUN];
    double values[TSC_SKETCH_RUN];
    while ((r = tschunk_iter_read(&it, ts, values, TSC_SKETCH_RUN)) > 0 && !tsc_is_error(r)) {
        size_t in_range = 0;
        while (in_range < r && ts[in_range] <= to) in_range++;
        st->samples_decoded += in_range;
        tsc_sketch_add_values(acc, values, in_range, &st->nan_count, &st->inf_count);
        if (in_range < r) return 0;
    }
    return tsc_is_error(r) ? r : 0;
}

/* One chunk of a range query: skipped, merged from its summary, or decoded. */
static size_t merge_chunk(tschunk_sketch *acc, const tschunk_chunk_ref *c, int64_t from, int64_t to,
                          tschunk_range_stats *st)
{
    tschunk_summary_info info;
    int summarized = c->summary && tschunk_summary_parse(c->summary, c->summary_size, &info) == 0;
    if (from > to || (summarized && info.count && (info.last_ts < from || info.first_ts > to))) { /* from > to: empty */
        st->chunks_skipped++;
        return 0;
    }
    size_t err;
    if (summarized && from <= info.first_ts && info.last_ts <= to) {
        if ((err = tschunk_sketch_decode_merge(acc, info.sketch, info.sketch_size, NULL))) return err;
        st->chunks_from_summaries++;
        st->nan_count += info.nan_count;
        st->inf_count += info.inf_count;
        return 0;
    }
    if ((err = merge_decoded(acc, c, from, to, st))) return err;
    st->chunks_decoded++;
    return 0;
}

/* chunks[start, end): indices rather than a pointer sum, since chunks may be NULL when there are none. */
static size_t merge_chunks(tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t start, size_t end,
                           int64_t from, int64_t to, tschunk_range_stats *st)
{
    for (size_t i = start; i < end; i++) {
        size_t err = merge_chunk(acc, &chunks[i], from, to, st);
        if (err) return err;
    }
    return 0;
}

size_t tschunk_range_merge(tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t n, int64_t from, int64_t to,
                           tschunk_range_stats *stats)
{
    tschunk_range_stats local;
    tschunk_range_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (!acc || (!chunks && n)) return TSC_ERROR(BAD_PARAMETER);
    return merge_chunks(acc, chunks, 0, n, from, to, st);
}

size_t tschunk_summary_combine_bound(const tschunk_sketch *scratch)
{
    /* head: 1 + 5 uvarints of at most 10 bytes; the sketch: any sketch of scratch's max_bins */
    return scratch ? 1 + 5 * 10 + 30 + 17 + 10 + 2 * 28 + 2 * (size_t)scratch->max_bins * 18 : 0;
}

size_t tschunk_summary_combine(tschunk_sketch *scratch, const tschunk_chunk_ref *chunks, size_t n, void *dst,
                               size_t capacity)
{
    return tsc_summary_combine_as(scratch, chunks, n, dst, capacity, 0);
}

size_t tsc_summary_combine_as(tschunk_sketch *scratch, const tschunk_chunk_ref *chunks, size_t n, void *dst,
                              size_t capacity, int sum_alone)
{
    if (!scratch || (!chunks && n) || (!dst && capacity)) return TSC_ERROR(BAD_PARAMETER);
    tschunk_sketch_clear(scratch);
    blob_fields total = {n, 0, 0, 0, INT64_MAX, INT64_MIN, NULL, 0};
    for (size_t i = 0; i < n; i++) {
        if (!chunks[i].summary) return TSC_ERROR(BAD_PARAMETER);
        blob_fields f;
        size_t err = parse_blob((const uint8_t *)chunks[i].summary, chunks[i].summary_size, 1, &f);
        if (err || (err = tschunk_sketch_decode_merge(scratch, f.sketch, f.sketch_size, NULL))) return err;
        total.count += f.count;
        total.nan_count += f.nan_count;
        total.inf_count += f.inf_count;
        if (f.count && f.first_ts < total.first_ts) total.first_ts = f.first_ts;
        if (f.count && f.last_ts > total.last_ts) total.last_ts = f.last_ts;
    }
    uint8_t head[1 + 5 * 10];
    size_t h = 0;
    head[h++] = BLOCK_MAGIC_VERSION;
    h += tsc_put_uvarint(head + h, total.chunks);
    h += tsc_put_uvarint(head + h, total.count);
    if (total.count) {
        h += tsc_put_uvarint(head + h, tsc_zigzag(total.first_ts));
        h += tsc_put_uvarint(head + h, (uint64_t)total.last_ts - (uint64_t)total.first_ts);
    }
    h += tsc_put_uvarint(head + h, total.nan_count);
    h += tsc_put_uvarint(head + h, total.inf_count);
    if (capacity < h) return TSC_ERROR(DST_TOO_SMALL);
    memcpy(dst, head, h);
    if (sum_alone) scratch->sum_compensation = 0, scratch->simple_sum = scratch->sum; /* tsc_sketch_sum: the sum */
    size_t size = tschunk_sketch_encode(scratch, (uint8_t *)dst + h, capacity - h, TSCHUNK_SKETCH_EXACT_STATS);
    return tsc_is_error(size) ? size : h + size;
}

/*
 * A block wholly inside the range contributes its combined summary, one wholly outside is skipped; a
 * block cut by an end, or whose blob does not parse, does not say it combines block->count chunks or
 * holds a sketch that does not decode, goes chunk by chunk, as do the chunks in no block.
 */
int tsc_summary_take_block(tschunk_sketch *acc, const void *blob, size_t size, size_t chunks, int64_t from,
                           int64_t to, tschunk_range_stats *st)
{
    blob_fields f;
    if (!blob || parse_blob((const uint8_t *)blob, size, 2, &f) != 0 || f.chunks != chunks || !f.count) return 0;
    if (f.last_ts < from || f.first_ts > to) {
        st->chunks_skipped += chunks;
        return 1;
    }
    /* a blob whose sketch does not decode changed nothing (tschunk_sketch_decode_merge): the chunks answer */
    if (from <= f.first_ts && f.last_ts <= to && tschunk_sketch_decode_merge(acc, f.sketch, f.sketch_size, NULL) == 0) {
        st->chunks_from_summaries += chunks;
        st->nan_count += f.nan_count;
        st->inf_count += f.inf_count;
        return 1;
    }
    return 0;
}

static size_t merge_block(tschunk_sketch *acc, const tschunk_chunk_ref *chunks, const tschunk_summary_block *b,
                          int64_t from, int64_t to, tschunk_range_stats *st)
{
    if (tsc_summary_take_block(acc, b->summary, b->summary_size, b->count, from, to, st)) return 0;
    return merge_chunks(acc, chunks, b->first, b->first + b->count, from, to, st);
}

size_t tschunk_range_merge_blocks(tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t n,
                                  const tschunk_summary_block *blocks, size_t nblocks, int64_t from, int64_t to,
                                  tschunk_range_stats *stats)
{
    tschunk_range_stats local;
    tschunk_range_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (!acc || (!chunks && n) || (!blocks && nblocks)) return TSC_ERROR(BAD_PARAMETER);
    size_t next = 0; /* the first chunk not taken yet */
    for (size_t k = 0; k < nblocks; k++)
        if (blocks[k].first < next || blocks[k].first > n || blocks[k].count > n - blocks[k].first)
            return TSC_ERROR(BAD_PARAMETER); /* out of order, overlapping or past the chunks */
        else
            next = blocks[k].first + blocks[k].count;
    next = 0;
    for (size_t k = 0; k < nblocks; k++) {
        size_t err = merge_chunks(acc, chunks, next, blocks[k].first, from, to, st);
        if (err || (err = merge_block(acc, chunks, &blocks[k], from, to, st))) return err;
        next = blocks[k].first + blocks[k].count;
    }
    return merge_chunks(acc, chunks, next, n, from, to, st);
}
