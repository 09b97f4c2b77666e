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

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#endif

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
    s->zero_count = s->count = s->sum = s->sum_compensation = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    s->exact = 1;
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

#ifdef TSC_HAVE_AVX2
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
    tsc_kahan_add(&r->sum, &r->compensation, v);
    r->count += 1;
    if (v < r->min) r->min = v;
    if (v > r->max) r->max = v;
}

/* A store's counts indexed by bin index, and the bin indices of its clean slots as four int32 lanes
 * each (the part of them an int32 holds; first > last when there is none). */
typedef struct {
    double *counts; /* counts - offset: indexed by bin index */
    __m128i first, last;
} clean_view;

__attribute__((target("avx2"))) static inline clean_view view_of(const tsc_store *st)
{
    int64_t first = st->offset + st->clean_lo, last = first + (int64_t)st->clean_len - 1;
    first = first < INT32_MIN ? INT32_MIN : first;
    last = last > INT32_MAX ? INT32_MAX : last;
    clean_view c = {st->counts - st->offset, _mm_set1_epi32(first > last ? INT32_MAX : (int32_t)first),
                    _mm_set1_epi32(first > last ? INT32_MIN : (int32_t)last)};
    return c;
}

/* The fast quads' bins since the last flush, lane by lane, into their store's [min_index, max_index]. */
typedef struct {
    __m128i least, greatest;
} bin_span;

__attribute__((target("avx2"))) static inline bin_span empty_span(void)
{
    bin_span span = {_mm_set1_epi32(INT32_MAX), _mm_set1_epi32(INT32_MIN)};
    return span;
}

/* The lanes reduced first: codec 1's summary push handed 16 values over at a time (to 0.36.0), and a lane at a
 * time this cost it 6 instructions a push. */
__attribute__((target("avx2"))) static inline void flush_span(tsc_store *st, bin_span *span)
{
    /* Every lane is empty or none is (a fast quad updates all four): lane 0 tells, before any reduction. */
    if (_mm_cvtsi128_si32(span->least) > _mm_cvtsi128_si32(span->greatest)) return;
    __m128i least = _mm_min_epi32(span->least, _mm_shuffle_epi32(span->least, 0x4e));
    __m128i greatest = _mm_max_epi32(span->greatest, _mm_shuffle_epi32(span->greatest, 0x4e));
    int32_t lo = _mm_cvtsi128_si32(_mm_min_epi32(least, _mm_shuffle_epi32(least, 0xb1)));
    int32_t hi = _mm_cvtsi128_si32(_mm_max_epi32(greatest, _mm_shuffle_epi32(greatest, 0xb1)));
    if (lo < st->min_index) st->min_index = lo;
    if (hi > st->max_index) st->max_index = hi;
    *span = empty_span();
}

__attribute__((target("avx2"))) static inline void add_to_span(bin_span *span, __m128i bins)
{
    span->least = _mm_min_epi32(span->least, bins);
    span->greatest = _mm_max_epi32(span->greatest, bins);
}

/* A fast quad's counts and statistics, its lanes written out (a loop over the lanes stored them to memory and
 * cost three more instructions a value). */
__attribute__((target("avx2"))) static inline void count_quad(double *counts, __m128i bins, const uint64_t *bits,
                                                              run_stats *r)
{
    counts[_mm_cvtsi128_si32(bins)] += 1;
    stats_accept(r, tsc_double_of(bits[0]));
    counts[_mm_extract_epi32(bins, 1)] += 1;
    stats_accept(r, tsc_double_of(bits[1]));
    counts[_mm_extract_epi32(bins, 2)] += 1;
    stats_accept(r, tsc_double_of(bits[2]));
    counts[_mm_extract_epi32(bins, 3)] += 1;
    stats_accept(r, tsc_double_of(bits[3]));
}

/*
 * The cubic mapping, four values at a time: their indices in one AVX2 pass (tsc_cubic_index's bits:
 * separate multiplies and adds, as the scalar C and Java). A quad whose values have one sign, are
 * indexable and fall inside that sign's store's clean range costs a count and the statistics (kept in
 * registers) per value, the store's range being updated when the run ends; any other quad goes value
 * by value. Index work of the next quad overlaps the Kahan chain of this one. Inside the clean range is
 * inside the window, so even an empty store would not move for these bins: the sketch is the one adding
 * the values one by one builds. @return the values done (a multiple of 4).
 */
__attribute__((target("avx2"))) static size_t add_cubic_avx2(tschunk_sketch *s, const uint64_t *bits, size_t n,
                                                             uint64_t *nan_count, uint64_t *refused)
{
    const tsc_mapping *m = &s->mapping;
    const __m256i magnitude_bits = _mm256_set1_epi64x(INT64_C(0x7fffffffffffffff));
    const __m256i significand = _mm256_set1_epi64x(INT64_C(0x000fffffffffffff));
    const __m256i one_bits = _mm256_set1_epi64x(INT64_C(0x3ff0000000000000));
    const __m256i two52_bits = _mm256_set1_epi64x(INT64_C(0x4330000000000000));
    const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256d lo = _mm256_set1_pd(m->min_indexable), hi = _mm256_set1_pd(m->max_indexable);
    const __m256d multiplier = _mm256_set1_pd(m->multiplier), norm_offset = _mm256_set1_pd(m->norm_offset);
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd(), bias = _mm256_set1_pd(0x1p52 + 1023);
    const __m256d a = _mm256_set1_pd(6.0 / 35.0), b = _mm256_set1_pd(-3.0 / 5.0), c = _mm256_set1_pd(10.0 / 7.0);
    tsc_store *stores[2] = {&s->pos, &s->neg};
    clean_view views[2] = {view_of(&s->pos), view_of(&s->neg)};
    bin_span spans[2] = {empty_span(), empty_span()};
    run_stats r = stats_load(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i raw = _mm256_loadu_si256((const __m256i *)(const void *)(bits + i));
        __m256i mb = _mm256_and_si256(raw, magnitude_bits);
        __m256d magnitude = _mm256_castsi256_pd(mb);
        __m256d indexable = _mm256_and_pd(_mm256_cmp_pd(magnitude, lo, _CMP_GT_OQ), _mm256_cmp_pd(magnitude, hi, _CMP_LE_OQ));
        /* the biased exponent as a double: 2^52 + e read from its bits, less 2^52 + 1023 (exact) */
        __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(mb, 52), two52_bits)), bias);
        __m256d sv = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(mb, significand), one_bits)), one);
        __m256d x = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(a, sv), b), sv), c), sv), e);
        x = _mm256_add_pd(_mm256_mul_pd(x, multiplier), norm_offset);
        /* (int)x, less 1 below zero: the all-ones compare lanes narrowed to 32 bits are that -1 */
        __m256i below = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(_mm256_cmp_pd(x, zero, _CMP_LT_OQ)), even_lanes);
        __m128i bins = _mm_add_epi32(_mm256_cvttpd_epi32(x), _mm256_castsi256_si128(below));
        int negative = _mm256_movemask_pd(_mm256_castsi256_pd(raw)), side = negative == 0xf;
        const clean_view *view = &views[side];
        __m128i outside = _mm_or_si128(_mm_cmpgt_epi32(view->first, bins), _mm_cmpgt_epi32(bins, view->last));
        /* one sign: a sign mask of 0 or 0xf, which less one are the only ones at 14 or above (unsigned) */
        int fits = (_mm256_movemask_pd(indexable) == 0xf) & ((unsigned)negative - 1u >= 14u) &
                   _mm_testz_si128(outside, outside);
        if (TSC_LIKELY(fits)) {
            /* A branch on the sign (a series rarely changes it) keeps both spans in registers. */
            if (side) add_to_span(&spans[1], bins);
            else add_to_span(&spans[0], bins);
            count_quad(view->counts, bins, bits + i, &r);
            continue;
        }
        flush_span(stores[0], &spans[0]);
        flush_span(stores[1], &spans[1]);
        stats_store(s, &r);
        _mm256_zeroupper(); /* gcc stopped inserting these here: SSE code after dirty upper halves runs slow */
        tsc_sketch_add_bits_scalar(s, bits + i, 4, nan_count, refused);
        r = stats_load(s);
        views[0] = view_of(stores[0]), views[1] = view_of(stores[1]); /* windows may have moved, clean ranges grown */
    }
    flush_span(stores[0], &spans[0]);
    flush_span(stores[1], &spans[1]);
    stats_store(s, &r);
    _mm256_zeroupper();
    return i;
}
#endif

/*
 * Add values given as bits, in order, as tschunk_sketch_add would one by one (NaNs counted in
 * nan_count, other refused values in refused): the codec-2 summary push and tschunk_sketch_add_many.
 */
void tsc_sketch_add_bits(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count, uint64_t *refused)
{
    size_t done = 0;
#ifdef TSC_HAVE_AVX2
    if (s->mapping.kind == TSCHUNK_MAPPING_CUBIC && tsc_avx2_here()) done = add_cubic_avx2(s, bits, n, nan_count, refused);
#endif
    tsc_sketch_add_bits_scalar(s, bits + done, n - done, nan_count, refused);
}

size_t tschunk_sketch_add_many(tschunk_sketch *s, const double *values, size_t n)
{
    if (!s || (!values && n)) return TSC_ERROR(BAD_PARAMETER);
    uint64_t bits[TSC_SKETCH_RUN], nan_count = 0, refused = 0;
    for (size_t from = 0; from < n; from += TSC_SKETCH_RUN) {
        size_t m = n - from < TSC_SKETCH_RUN ? n - from : TSC_SKETCH_RUN;
        memcpy(bits, values + from, m * sizeof *bits); /* doubles as their bit patterns, no aliasing */
        tsc_sketch_add_bits(s, bits, m, &nan_count, &refused);
    }
    return (size_t)(nan_count + refused);
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
    s->zero_count = s->count = s->sum = s->sum_compensation = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    s->exact = 1;
}

void tsc_sketch_accept_stats(tschunk_sketch *s, double value, double weight) { tsc_accept_stats(s, value, weight); }

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
    tsc_accept_stats(s, value, weight);
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
    tsc_kahan_add(&dst->sum, &dst->sum_compensation, src->sum);
    dst->count += src->count;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
    dst->exact &= src->exact;
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
    out->sum = s->sum;
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
