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
 */
#include <math.h>

#include "sketch.h"

#define SUMMARY_MAGIC_VERSION 0xd1u

void tsc_summary_push(tschunk_encoder *enc, uint64_t bits);
void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n);

/* A value the fast path does not take: NaN, zero, infinity, beyond the range, another mapping. */
static void push_general(tschunk_encoder *enc, double v)
{
    if (isnan(v)) enc->nan_count++;
    else if (tschunk_is_error(tschunk_sketch_add(enc->summary, v))) enc->inf_count++;
}

void tsc_summary_push(tschunk_encoder *enc, uint64_t bits)
{
    double v = tsc_double_of(bits);
    if (!tsc_sketch_add_fast(enc->summary, v)) push_general(enc, v);
}

/* The statistics of tsc_accept_stats (weight 1), kept in locals over a run of values. */
typedef struct {
    double sum, compensation, count, min, max;
} run_stats;

TSC_INLINE run_stats stats_load(const tschunk_sketch *s)
{
    run_stats r = {s->sum, s->sum_compensation, s->count, s->min, s->max};
    return r;
}

TSC_INLINE void stats_store(tschunk_sketch *s, const run_stats *r)
{
    s->sum = r->sum, s->sum_compensation = r->compensation, s->count = r->count, s->min = r->min, s->max = r->max;
}

TSC_INLINE void stats_accept(run_stats *r, double v)
{
    double term = v - r->compensation, next = r->sum + term;
    r->compensation = (next - r->sum) - term;
    r->sum = next;
    r->count += 1;
    if (v < r->min) r->min = v;
    if (v > r->max) r->max = v;
}

/* Every value positive, indexable, and its bin inside the positive store's clean range: a count and the
 * statistics per value, the store's range once. */
static void push_positive_run(tschunk_sketch *s, const uint64_t *bits, const int32_t *index, uint32_t n,
                              const int32_t range[2])
{
    double *counts = s->pos.counts - s->pos.offset;
    run_stats r = stats_load(s);
    for (uint32_t i = 0; i < n; i++) {
        counts[index[i]] += 1;
        stats_accept(&r, tsc_double_of(bits[i]));
    }
    stats_store(s, &r);
    if (range[0] < s->pos.min_index) s->pos.min_index = range[0];
    if (range[1] > s->pos.max_index) s->pos.max_index = range[1];
}

/* Anything else, value by value: the bin through tsc_store_add, the other values the general way. */
static void push_mixed_run(tschunk_encoder *enc, const uint64_t *bits, const int32_t *index, const uint8_t *ok,
                           uint32_t n)
{
    tschunk_sketch *s = enc->summary;
    run_stats r = stats_load(s);
    for (uint32_t i = 0; i < n; i++) {
        double v = tsc_double_of(bits[i]);
        if (!TSC_LIKELY(ok[i])) {
            stats_store(s, &r);
            push_general(enc, v);
            r = stats_load(s);
            continue;
        }
        tsc_store_add(s, v > 0 ? &s->pos : &s->neg, index[i], 1);
        stats_accept(&r, v);
    }
    stats_store(s, &r);
}

/*
 * Codec 2 hands the summary its values a group (up to 128) at a time, when it flushes the group: the
 * cubic indices of the whole group come from one AVX2 pass, and each value then costs its bin and its
 * statistics. The values are taken in push order, so the sketch (Kahan sum included) is the one that
 * pushing them one by one builds.
 */
void tsc_summary_push_group(tschunk_encoder *enc, const uint64_t *bits, uint32_t n)
{
    tschunk_sketch *s = enc->summary;
    if (s->mapping.kind != TSCHUNK_MAPPING_CUBIC) {
        for (uint32_t i = 0; i < n; i++) tsc_summary_push(enc, bits[i]);
        return;
    }
    int32_t index[TSCHUNK_GROUP_SAMPLES], range[2];
    uint8_t ok[TSCHUNK_GROUP_SAMPLES];
    for (uint32_t from = 0; from < n; from += TSCHUNK_GROUP_SAMPLES) {
        uint32_t m = n - from < TSCHUNK_GROUP_SAMPLES ? n - from : TSCHUNK_GROUP_SAMPLES;
        int positive = tsc_cubic_indices(&s->mapping, bits + from, m, index, ok, range);
        const tsc_store *pos = &s->pos;
        uint64_t lo_slot = (uint64_t)(range[0] - pos->offset), hi_slot = (uint64_t)(range[1] - pos->offset);
        /* Inside the clean range is inside the window: even an empty store (a cleared summary) would not
         * move for these bins, so the fast run leaves the state that adding them one by one leaves. */
        if (positive && lo_slot - pos->clean_lo < pos->clean_len && hi_slot - pos->clean_lo < pos->clean_len)
            push_positive_run(s, bits + from, index, m, range);
        else
            push_mixed_run(enc, bits + from, index, ok, m);
    }
}

size_t tschunk_encoder_set_summary(tschunk_encoder *enc, tschunk_sketch *sketch)
{
    if (!enc) return TSC_ERROR(BAD_PARAMETER);
    if (enc->count) return TSC_ERROR(STAGE);
    if (sketch) tschunk_sketch_clear(sketch);
    enc->summary = sketch;
    enc->nan_count = enc->inf_count = 0;
    return 0;
}

size_t tschunk_encoder_summary_bound(const tschunk_encoder *enc)
{
    return enc && enc->summary ? 1 + 5 + 10 + 10 + 10 + 10 + tschunk_sketch_encode_bound(enc->summary) : 0;
}

size_t tschunk_encoder_write_summary(const tschunk_encoder *enc, void *dst, size_t capacity)
{
    if (!enc || !enc->summary || enc->stage != 0xa5 /* finished */) return TSC_ERROR(STAGE);
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
    return tschunk_is_error(n) ? n : h + n;
}

static size_t read_field(const uint8_t *p, size_t size, size_t *pos, uint64_t *v)
{
    size_t n = tsc_get_uvarint(p + *pos, size - *pos, v);
    if (n == 0) return *pos + 10 > size ? TSC_ERROR(TRUNCATED) : TSC_ERROR(CORRUPT);
    *pos += n;
    return 0;
}

size_t tschunk_summary_parse(const void *blob, size_t size, tschunk_summary_info *info)
{
    if (!blob || !info) return TSC_ERROR(BAD_PARAMETER);
    const uint8_t *p = (const uint8_t *)blob;
    memset(info, 0, sizeof *info);
    if (size < 1) return TSC_ERROR(TRUNCATED);
    if ((p[0] >> 4) != 0xd) return TSC_ERROR(BAD_MAGIC);
    if ((p[0] & 15) != 1) return TSC_ERROR(BAD_VERSION);
    size_t pos = 1, err;
    uint64_t count, v;
    if ((err = read_field(p, size, &pos, &count))) return err;
    if (count > TSCHUNK_MAX_SAMPLES) return TSC_ERROR(CORRUPT);
    info->count = (uint32_t)count;
    if (count) {
        if ((err = read_field(p, size, &pos, &v))) return err;
        info->first_ts = tsc_unzigzag(v);
        if ((err = read_field(p, size, &pos, &v))) return err;
        if (v > (uint64_t)INT64_MAX - (uint64_t)info->first_ts) return TSC_ERROR(CORRUPT);
        info->last_ts = (int64_t)((uint64_t)info->first_ts + v);
    }
    if ((err = read_field(p, size, &pos, &info->nan_count)) || (err = read_field(p, size, &pos, &info->inf_count)))
        return err;
    if (info->nan_count + info->inf_count > count) return TSC_ERROR(CORRUPT);
    info->sketch = p + pos;
    info->sketch_size = size - pos;
    return 0;
}

size_t tschunk_summary_merge(tschunk_sketch *acc, const void *blob, size_t size)
{
    tschunk_summary_info info;
    size_t err = tschunk_summary_parse(blob, size, &info);
    if (err) return err;
    return tschunk_sketch_decode_merge(acc, info.sketch, info.sketch_size, NULL);
}

/* Add the chunk's samples with from <= ts <= to. */
static size_t merge_decoded(tschunk_sketch *acc, const tschunk_chunk_ref *c, int64_t from, int64_t to,
                            tschunk_range_stats *st)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, c->chunk, c->chunk_size);
    if (r) return r;
    int64_t ts;
    double v;
    if ((r = tschunk_iter_seek(&it, from)) != 1) return tschunk_is_error(r) ? r : 0;
    while ((r = tschunk_iter_next(&it, &ts, &v)) == 1 && ts <= to) {
        st->samples_decoded++;
        if (isnan(v)) st->nan_count++;
        else if (tschunk_is_error(tschunk_sketch_add(acc, v))) st->inf_count++;
    }
    return tschunk_is_error(r) ? r : 0;
}

size_t tschunk_range_merge(tschunk_sketch *acc, const tschunk_chunk_ref *chunks, size_t n, int64_t from, int64_t to,
                           tschunk_range_stats *stats)
{
    tschunk_range_stats local;
    tschunk_range_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    if (!acc || (!chunks && n)) return TSC_ERROR(BAD_PARAMETER);
    for (size_t i = 0; i < n; i++) {
        const tschunk_chunk_ref *c = &chunks[i];
        tschunk_summary_info info;
        int summarized = c->summary && tschunk_summary_parse(c->summary, c->summary_size, &info) == 0;
        if (summarized && info.count && (info.last_ts < from || info.first_ts > to)) {
            st->chunks_skipped++;
            continue;
        }
        size_t err;
        if (summarized && from <= info.first_ts && info.last_ts <= to) {
            if ((err = tschunk_sketch_decode_merge(acc, info.sketch, info.sketch_size, NULL))) return err;
            st->chunks_from_summaries++;
            st->nan_count += info.nan_count;
            st->inf_count += info.inf_count;
            continue;
        }
        if ((err = merge_decoded(acc, c, from, to, st))) return err;
        st->chunks_decoded++;
    }
    return 0;
}
