/*
 * DDSketch: two dense stores (positive values, negative values by |v|), a
 * zero bucket and exact statistics. Each store is a window of max_bins
 * counts allocated once at creation; a range wider than max_bins collapses
 * its lowest bins (or its highest, by option) into the edge bin, so memory is
 * bounded whatever the input and adding never allocates.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "sketch.h"

#define DEFAULT_MAX_BINS 2048u
#define MAX_MAX_BINS (1u << 20)

static int store_empty(const tsc_store *st) { return st->min_index > st->max_index; }

/* Bins outside [min_index, max_index] are zero already: only the used range is cleared. The window
 * and its clean range stay where they are, so that a summary sketch cleared for every chunk finds the
 * next chunk's values in slots that are zero already. */
static void store_clear(tsc_store *st)
{
    if (st->min_index <= st->max_index)
        memset(st->counts + (st->min_index - st->offset), 0,
               (size_t)(st->max_index - st->min_index + 1) * sizeof(double));
    st->min_index = INT64_MAX;
    st->max_index = INT64_MIN;
}

/* Move the window so that it covers [lo, hi] (hi - lo < max_bins). The bins keep their values; the
 * clean range shrinks to them, since the slots they left hold stale counts. */
static void store_cover(tsc_store *st, int64_t lo, int64_t hi, uint32_t max_bins)
{
    if (lo >= st->offset && hi < st->offset + (int64_t)max_bins) return;
    int64_t offset = lo - ((int64_t)max_bins - (hi - lo + 1)) / 2;
    if (!store_empty(st)) {
        size_t n = (size_t)(st->max_index - st->min_index + 1);
        double *from = st->counts + (st->min_index - st->offset), *to = st->counts + (st->min_index - offset);
        memmove(to, from, n * sizeof(double));
        st->clean_lo = (uint32_t)(st->min_index - offset);
        st->clean_len = (uint32_t)n;
    }
    st->offset = offset;
}

/*
 * Extend the clean range (the slots known to be zero or in use) over slots [lo, hi], zeroing only what
 * it gains, plus as much again as it holds (at least 64 slots) on the side it grows, so that bins added
 * in index order come here a logarithmic number of times. A new sketch zeroes nothing up front: a
 * decoded 100-bin sketch no longer pays for clearing two 2,048-bin windows.
 */
static void store_clean(tsc_store *st, int64_t lo, int64_t hi, uint32_t max_bins)
{
    int64_t clean_lo = st->clean_lo, clean_hi = clean_lo + st->clean_len; /* [clean_lo, clean_hi) */
    if (lo >= clean_lo && hi < clean_hi) return;
    int64_t grow = st->clean_len > 64 ? st->clean_len : 64;
    int64_t want_lo = lo < clean_lo ? lo - grow : clean_lo, want_hi = hi >= clean_hi ? hi + 1 + grow : clean_hi;
    if (want_lo < 0) want_lo = 0;
    if (want_hi > (int64_t)max_bins) want_hi = max_bins;
    if (st->clean_len == 0 || want_hi < clean_lo || want_lo > clean_hi) {
        /* disjoint: only an empty store (a used range lies inside both), so start afresh around [lo, hi] */
        if (lo - 64 > want_lo) want_lo = lo - 64;
        if (hi + 65 < want_hi) want_hi = hi + 65;
        memset(st->counts + want_lo, 0, (size_t)(want_hi - want_lo) * sizeof(double));
    } else {
        memset(st->counts + want_lo, 0, (size_t)(clean_lo - want_lo) * sizeof(double));
        memset(st->counts + clean_hi, 0, (size_t)(want_hi - clean_hi) * sizeof(double));
    }
    st->clean_lo = (uint32_t)want_lo;
    st->clean_len = (uint32_t)(want_hi - want_lo);
}

/* Fold the bins outside [keep_lo, keep_hi] into the edge bin they fall past. */
static double store_fold(tsc_store *st, int64_t keep_lo, int64_t keep_hi)
{
    double folded = 0;
    for (int64_t i = st->min_index; i <= st->max_index && i < keep_lo; i++) {
        folded = tsc_count_add(folded, st->counts[i - st->offset]);
        st->counts[i - st->offset] = 0;
    }
    for (int64_t i = st->max_index; i >= st->min_index && i > keep_hi; i--) {
        folded = tsc_count_add(folded, st->counts[i - st->offset]);
        st->counts[i - st->offset] = 0;
    }
    if (st->min_index < keep_lo) st->min_index = keep_lo;
    if (st->max_index > keep_hi) st->max_index = keep_hi;
    return folded;
}

int tsc_store_reserve(const tschunk_sketch *s, tsc_store *st, int64_t lo, int64_t hi)
{
    if (!store_empty(st)) {
        lo = st->min_index < lo ? st->min_index : lo;
        hi = st->max_index > hi ? st->max_index : hi;
    }
    if (hi - lo >= (int64_t)s->max_bins) return 0; /* bin indices lie within int32: no overflow */
    store_cover(st, lo, hi, s->max_bins);
    if (st->clean_len == 0) { /* a new store: the slots its bins take, no more (a decoded sketch's whole range) */
        st->clean_lo = (uint32_t)(lo - st->offset);
        st->clean_len = (uint32_t)(hi - lo + 1);
        memset(st->counts + st->clean_lo, 0, st->clean_len * sizeof(double));
        return 1;
    }
    store_clean(st, lo - st->offset, hi - st->offset, s->max_bins);
    return 1;
}

/* The general case: widen or move the window, collapse beyond max_bins. */
void tsc_store_add_slow(tschunk_sketch *s, tsc_store *st, int64_t index, double count)
{
    uint32_t max_bins = s->max_bins;
    double folded = 0;
    int64_t fold_at = index;
    if (!store_empty(st)) {
        int64_t lo = index < st->min_index ? index : st->min_index;
        int64_t hi = index > st->max_index ? index : st->max_index;
        if (hi - lo + 1 > (int64_t)max_bins) {
            if (s->collapse_highest) hi = lo + max_bins - 1;
            else lo = hi - max_bins + 1;
            fold_at = s->collapse_highest ? hi : lo;
            folded = store_fold(st, lo, hi);
            if (index < lo) index = lo;
            if (index > hi) index = hi;
        }
        store_cover(st, lo, hi, max_bins);
        store_clean(st, lo - st->offset, hi - st->offset, max_bins);
    } else {
        store_cover(st, index, index, max_bins);
        store_clean(st, index - st->offset, index - st->offset, max_bins);
    }
    st->counts[index - st->offset] = tsc_count_add(st->counts[index - st->offset], count);
    double *fold_slot = &st->counts[fold_at - st->offset];
    if (!tsc_is_zero(folded)) *fold_slot = tsc_count_add(*fold_slot, folded);
    int64_t touched_lo = index < fold_at ? index : fold_at, touched_hi = index > fold_at ? index : fold_at;
    if (tsc_is_zero(folded)) touched_lo = touched_hi = index;
    if (touched_lo < st->min_index) st->min_index = touched_lo;
    if (touched_hi > st->max_index) st->max_index = touched_hi;
}

/* The sketch written field by field in one initializer: a memset of the struct compiled to `rep stos`,
 * whose start-up cost was 14 ns of a 0.3 us decode into a new sketch. */
static size_t sketch_alloc(tschunk_sketch **out, const tschunk_sketch_options *opts, const tsc_mapping *mapping)
{
    tschunk_sketch_options o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (o.max_bins == 0) o.max_bins = DEFAULT_MAX_BINS;
    if (o.max_bins > MAX_MAX_BINS) return TSC_ERROR(BAD_PARAMETER);
    o.allocator = tsc_allocator_or_default(&o.allocator);
    size_t bytes = sizeof(tschunk_sketch) + 2 * (size_t)o.max_bins * sizeof(double);
    tschunk_sketch *s = (tschunk_sketch *)o.allocator.alloc(o.allocator.opaque, bytes);
    if (!s) return TSC_ERROR(ALLOCATION);
    double *counts = (double *)(void *)(s + 1);
    /* An empty store: min > max, nothing for clear to zero, no clean slots. */
    tsc_store pos = {counts, 0, INT64_MAX, INT64_MIN, 0, 0}, neg = {counts + o.max_bins, 0, INT64_MAX, INT64_MIN, 0, 0};
    s->mapping = *mapping;
    s->pos = pos;
    s->neg = neg;
    s->zero_count = s->count = s->sum = s->sum_compensation = s->simple_sum = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    s->bins_only = o.bins_only != 0;
    tsc_sketch_set_exact(s, !s->bins_only);
    s->max_bins = o.max_bins;
    s->collapse_highest = o.collapse_highest != 0;
    s->allocator = o.allocator;
    *out = s;
    return 0;
}

size_t tschunk_sketch_create(tschunk_sketch **out, const tschunk_sketch_options *opts)
{
    if (!out) return TSC_ERROR(BAD_PARAMETER);
    *out = NULL;
    tsc_mapping m;
    double ra = opts && !tsc_is_zero(opts->relative_accuracy) ? opts->relative_accuracy : 0.01;
    size_t err = tsc_mapping_from_accuracy(&m, opts ? opts->mapping : TSCHUNK_MAPPING_LOGARITHMIC, ra);
    if (err) return err;
    return sketch_alloc(out, opts, &m);
}

size_t tschunk_sketch_create_mapping(tschunk_sketch **out, tschunk_mapping_kind kind, double gamma,
                                     double index_offset, const tschunk_sketch_options *opts)
{
    if (!out) return TSC_ERROR(BAD_PARAMETER);
    *out = NULL;
    tsc_mapping m;
    size_t err = tsc_mapping_from_gamma(&m, kind, gamma, index_offset);
    if (err) return err;
    return tsc_sketch_create_with(out, &m, opts);
}

size_t tsc_sketch_create_with(tschunk_sketch **out, const tsc_mapping *mapping, const tschunk_sketch_options *opts)
{
    return sketch_alloc(out, opts, mapping);
}

/* A value tschunk_sketch_add takes the general way: zero, NaN, infinity, beyond the range. */
static void add_general(tschunk_sketch *s, double v, uint64_t *nan_count, uint64_t *refused)
{
    if (isnan(v)) ++*nan_count;
    else if (tsc_is_error(tschunk_sketch_add(s, v))) ++*refused;
}

void tsc_sketch_add_bits_scalar(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                                uint64_t *refused)
{
    for (size_t i = 0; i < n; i++) {
        double v = tsc_double_of(bits[i]);
        if (!tsc_sketch_add_fast(s, v)) add_general(s, v, nan_count, refused);
    }
}

void tsc_sketch_add_values(tschunk_sketch *s, const double *values, size_t n, uint64_t *nan_count, uint64_t *refused)
{
    uint64_t bits[TSC_SKETCH_RUN];
    for (size_t from = 0; from < n; from += TSC_SKETCH_RUN) {
        size_t m = n - from < TSC_SKETCH_RUN ? n - from : TSC_SKETCH_RUN;
        memcpy(bits, values + from, m * sizeof *bits); /* doubles as their bit patterns, no aliasing */
        tsc_sketch_add_bits(s, bits, m, nan_count, refused);
    }
}

size_t tschunk_sketch_add_many(tschunk_sketch *s, const double *values, size_t n)
{
    if (!s || (!values && n)) return TSC_ERROR(BAD_PARAMETER);
    uint64_t nan_count = 0, refused = 0;
    tsc_sketch_add_values(s, values, n, &nan_count, &refused);
    return (size_t)(nan_count + refused);
}

/* The stage keeps bit patterns, so its run goes to the kernel as it is, without add_many's copy. */
_Static_assert(TSCHUNK_SKETCH_STAGE_VALUES <= TSC_SKETCH_RUN, "a stage is one run of the batch add");
size_t tschunk_sketch_stage_flush(tschunk_sketch_stage *stage, tschunk_sketch *s)
{
    if (!stage || !s || stage->count > TSCHUNK_SKETCH_STAGE_VALUES) return TSC_ERROR(BAD_PARAMETER);
    uint64_t nan_count = 0, refused = 0;
    tsc_sketch_add_bits(s, stage->value_bits, stage->count, &nan_count, &refused);
    stage->refused += nan_count + refused;
    stage->count = 0;
    return 0;
}

void tschunk_sketch_free(tschunk_sketch *s)
{
    if (s) s->allocator.free(s->allocator.opaque, s);
}

void tschunk_sketch_clear(tschunk_sketch *s)
{
    if (!s) return;
    store_clear(&s->pos);
    store_clear(&s->neg);
    s->zero_count = s->count = s->sum = s->sum_compensation = s->simple_sum = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    tsc_sketch_set_exact(s, !s->bins_only);
}

size_t tschunk_sketch_add_weighted(tschunk_sketch *s, double value, double weight)
{
    double magnitude = fabs(value);
    /* NaN fails every comparison. A weight that would take the count to infinity is refused too: the
     * compact encoding (and so our decoder) holds finite counts only, and the count bounds every bin's. */
    if (!(weight > 0) || !(s->count + weight <= DBL_MAX) || !(magnitude <= s->mapping.max_indexable))
        return TSC_ERROR(UNTRACKABLE);
    if (magnitude > s->mapping.min_indexable) {
        tsc_store *st = value > 0 ? &s->pos : &s->neg;
        tsc_store_add(s, st, tsc_mapping_index(&s->mapping, magnitude), weight);
    } else {
        s->zero_count += weight;
    }
    tsc_accept_stats_if_exact(s, value, weight);
    return 0;
}

size_t tschunk_sketch_add(tschunk_sketch *s, double value)
{
    return tsc_sketch_add_fast(s, value) ? 0 : tschunk_sketch_add_weighted(s, value, 1.0);
}

static void merge_store(tschunk_sketch *dst, tsc_store *to, const tsc_store *from)
{
    for (int64_t i = from->min_index; i <= from->max_index; i++) {
        double c = from->counts[i - from->offset];
        if (!tsc_is_zero(c)) tsc_store_add(dst, to, i, c);
    }
}

size_t tschunk_sketch_merge(tschunk_sketch *dst, const tschunk_sketch *src)
{
    if (!dst || !src) return TSC_ERROR(BAD_PARAMETER);
    if (!tsc_mapping_equal(&dst->mapping, &src->mapping)) return TSC_ERROR(NOT_MERGEABLE);
    if (!(dst->count + src->count <= DBL_MAX && dst->zero_count + src->zero_count <= DBL_MAX))
        return TSC_ERROR(UNTRACKABLE); /* counts past DBL_MAX: as tschunk_sketch_add_weighted */
    merge_store(dst, &dst->pos, &src->pos);
    merge_store(dst, &dst->neg, &src->neg);
    dst->zero_count += src->zero_count;
    tsc_kahan_add(&dst->sum, &dst->sum_compensation, src->sum); /* the reference libraries' merge: both terms */
    tsc_kahan_add(&dst->sum, &dst->sum_compensation, src->sum_compensation);
    dst->simple_sum += src->simple_sum;
    dst->count += src->count;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    tsc_sketch_set_exact(dst, dst->exact & src->exact);
    return 0;
}

/* A store's total as sketches-java computes it: its bins summed by ascending
 * index (with non-integer counts the order changes the last bits, and the rank). */
static double store_sum(const tsc_store *st)
{
    double total = 0;
    for (int64_t i = st->min_index; i <= st->max_index; i++) total += st->counts[i - st->offset];
    return total;
}

size_t tsc_sketch_quantile_unclamped(const tschunk_sketch *s, double q, double *value)
{
    if (!(q >= 0 && q <= 1)) return TSC_ERROR(BAD_PARAMETER);
    double count = s->zero_count + store_sum(&s->neg) + store_sum(&s->pos);
    if (!(count > 0)) return TSC_ERROR(STAGE);
    double rank = q * (count - 1), n = 0;
    for (int64_t i = s->neg.max_index; i >= s->neg.min_index; i--) {
        n += s->neg.counts[i - s->neg.offset];
        if (n > rank) {
            *value = -tsc_mapping_value(&s->mapping, (int32_t)i);
            return 0;
        }
    }
    n += s->zero_count;
    if (n > rank) {
        *value = 0;
        return 0;
    }
    for (int64_t i = s->pos.min_index; i <= s->pos.max_index; i++) {
        n += s->pos.counts[i - s->pos.offset];
        if (n > rank) {
            *value = tsc_mapping_value(&s->mapping, (int32_t)i);
            return 0;
        }
    }
    /* Rounding in the running sum: the largest value. */
    *value = store_empty(&s->pos) ? 0 : tsc_mapping_value(&s->mapping, (int32_t)s->pos.max_index);
    return 0;
}

size_t tschunk_sketch_quantile(const tschunk_sketch *s, double q, double *value)
{
    if (!s || !value) return TSC_ERROR(BAD_PARAMETER);
    size_t err = tsc_sketch_quantile_unclamped(s, q, value);
    if (err) return err;
    if (s->exact && s->count > 0) {
        if (*value < s->min) *value = s->min;
        if (*value > s->max) *value = s->max;
    }
    return 0;
}

static uint32_t nonempty_bins(const tsc_store *st)
{
    uint32_t n = 0;
    for (int64_t i = st->min_index; i <= st->max_index; i++) n += !tsc_is_zero(st->counts[i - st->offset]);
    return n;
}

/* sketches-java's getSum, getMinValue, getMaxValue: every bin at its representative value. */
static void stats_from_bins(const tschunk_sketch *s, tschunk_sketch_stats *out)
{
    double sum = 0, lo, hi;
    for (int64_t i = s->pos.min_index; i <= s->pos.max_index; i++)
        sum += tsc_mapping_value(&s->mapping, (int32_t)i) * s->pos.counts[i - s->pos.offset];
    for (int64_t i = s->neg.min_index; i <= s->neg.max_index; i++)
        sum -= tsc_mapping_value(&s->mapping, (int32_t)i) * s->neg.counts[i - s->neg.offset];
    out->sum = sum;
    if (tsc_sketch_quantile_unclamped(s, 0, &lo) == 0 && tsc_sketch_quantile_unclamped(s, 1, &hi) == 0) {
        out->min = lo;
        out->max = hi;
    }
}

void tschunk_sketch_get_stats(const tschunk_sketch *s, tschunk_sketch_stats *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!s) return;
    out->count = s->count;
    out->sum = tsc_sketch_sum(s);
    out->min = s->min;
    out->max = s->max;
    if (!s->exact) stats_from_bins(s, out);
    out->zero_count = s->zero_count;
    out->exact = s->exact;
    out->mapping = s->mapping.kind;
    out->gamma = s->mapping.gamma;
    out->index_offset = s->mapping.index_offset;
    out->relative_accuracy = s->mapping.relative_accuracy;
    out->positive_bins = nonempty_bins(&s->pos);
    out->negative_bins = nonempty_bins(&s->neg);
    out->min_indexable = s->mapping.min_indexable;
    out->max_indexable = s->mapping.max_indexable;
}

size_t tschunk_sketch_bins(const tschunk_sketch *s, int negative, void (*visit)(void *ctx, int32_t index, double count),
                           void *ctx)
{
    if (!s) return TSC_ERROR(BAD_PARAMETER);
    const tsc_store *st = negative ? &s->neg : &s->pos;
    size_t n = 0;
    for (int64_t i = st->min_index; i <= st->max_index; i++) {
        double c = st->counts[i - st->offset];
        if (tsc_is_zero(c)) continue;
        if (visit) visit(ctx, (int32_t)i, c);
        n++;
    }
    return n;
}
