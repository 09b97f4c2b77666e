/*
 * The batch add of the cubic mapping (tsc_sketch_add_bits: the summary push and tschunk_sketch_add_many),
 * four values a step with AVX2 or eight with AVX-512, behind runtime dispatch; sketch.c's value-by-value
 * loop (tsc_sketch_add_bits_scalar) is the twin the tests compare sketch for sketch. Every kernel builds
 * the sketch adding the same values one by one builds, bit for bit: indices by the scalar formula's
 * operations (no fused multiply-add), bins counted and the Kahan sum stepped in the values' order.
 */
#include <math.h>

#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#endif

#ifdef TSC_HAVE_AVX2
/* The statistics of tsc_accept_stats (weight 1), kept in locals over a run of values. */
typedef struct {
    double sum, compensation, count, min, max, simple;
} run_stats;

TSC_INLINE run_stats stats_load(const tschunk_sketch *s)
{
    run_stats r = {s->sum, s->sum_compensation, s->count, s->min, s->max, s->simple_sum};
    return r;
}

TSC_INLINE void stats_store(tschunk_sketch *s, const run_stats *r)
{
    s->sum = r->sum, s->sum_compensation = r->compensation, s->count = r->count, s->min = r->min, s->max = r->max;
    s->simple_sum = r->simple;
}

/* with_sum 0: a sketch whose statistics are derived (bins-only, or a decoded stream had no COUNT) keeps its
 * count only, as tsc_accept_stats_if_exact does: the others are never read, and Kahan's chain bounds the loop. */
TSC_INLINE void stats_accept(run_stats *r, double v, int with_sum)
{
    r->count += 1;
    if (!with_sum) return;
    tsc_kahan_add(&r->sum, &r->compensation, v);
    r->simple += v;
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
                                                              run_stats *r, int with_sum)
{
    counts[_mm_cvtsi128_si32(bins)] += 1;
    stats_accept(r, tsc_double_of(bits[0]), with_sum);
    counts[_mm_extract_epi32(bins, 1)] += 1;
    stats_accept(r, tsc_double_of(bits[1]), with_sum);
    counts[_mm_extract_epi32(bins, 2)] += 1;
    stats_accept(r, tsc_double_of(bits[2]), with_sum);
    counts[_mm_extract_epi32(bins, 3)] += 1;
    stats_accept(r, tsc_double_of(bits[3]), with_sum);
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
__attribute__((target("avx2"), always_inline)) static inline size_t add_cubic_avx2_as(tschunk_sketch *s,
        const uint64_t *bits, size_t n, uint64_t *nan_count, uint64_t *refused, int with_sum)
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
        __m256d indexable =
            _mm256_and_pd(_mm256_cmp_pd(magnitude, lo, _CMP_GT_OQ), _mm256_cmp_pd(magnitude, hi, _CMP_LE_OQ));
        /* the biased exponent as a double: 2^52 + e read from its bits, less 2^52 + 1023 (exact) */
        __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(mb, 52), two52_bits)), bias);
        __m256i significand_of_one = _mm256_or_si256(_mm256_and_si256(mb, significand), one_bits);
        __m256d sv = _mm256_sub_pd(_mm256_castsi256_pd(significand_of_one), one);
        __m256d poly = _mm256_add_pd(_mm256_mul_pd(a, sv), b);
        poly = _mm256_add_pd(_mm256_mul_pd(poly, sv), c);
        __m256d x = _mm256_add_pd(_mm256_mul_pd(poly, sv), e);
        x = _mm256_add_pd(_mm256_mul_pd(x, multiplier), norm_offset);
        /* (int)x, less 1 below zero: the all-ones compare lanes narrowed to 32 bits are that -1 */
        __m256d below_lanes = _mm256_cmp_pd(x, zero, _CMP_LT_OQ);
        __m256i below = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(below_lanes), even_lanes);
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
            count_quad(view->counts, bins, bits + i, &r, with_sum);
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

/* One loop for each kind of sketch: the statistics' test is outside it. */
__attribute__((target("avx2"))) static size_t add_cubic_avx2(tschunk_sketch *s, const uint64_t *bits, size_t n,
                                                             uint64_t *nan_count, uint64_t *refused)
{
    return s->exact ? add_cubic_avx2_as(s, bits, n, nan_count, refused, 1)
                    : add_cubic_avx2_as(s, bits, n, nan_count, refused, 0);
}

#  ifndef TSC_NO_AVX512
#    define AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw")))
#    define AVX512_INLINE __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw"), always_inline)) static inline

/* n values added with weight 1 to a count that has seen only whole numbers below 2^53 - n: one add, exactly
 * what n adds of 1 give; otherwise those n adds. */
static double count_ones(double count, uint64_t n)
{
    if (tsc_is_zero(count - floor(count)) && count <= 0x1p53 - (double)n) return count + (double)n;
    for (uint64_t k = 0; k < n; k++) count += 1;
    return count;
}

/* The statistics an octet left in lanes (min, max; a count of values) into the run's. */
AVX512_INLINE void fold_lanes(run_stats *r, __m512d *least, __m512d *greatest, uint64_t *values)
{
    double lo = _mm512_reduce_min_pd(*least), hi = _mm512_reduce_max_pd(*greatest);
    if (lo < r->min) r->min = lo;
    if (hi > r->max) r->max = hi;
    r->count = count_ones(r->count, *values);
    *least = _mm512_set1_pd(INFINITY), *greatest = _mm512_set1_pd(-INFINITY), *values = 0;
}

/* An octet's counts and Kahan steps, value by value (the sum's order is the values' order); with_sum 0, the
 * counts alone (stats_accept). */
AVX512_INLINE void count_octet(double *counts, __m256i bins, const uint64_t *bits, run_stats *r, int with_sum)
{
    int32_t at[8];
    _mm256_storeu_si256((__m256i *)(void *)at, bins);
    for (int k = 0; k < 8; k++) {
        counts[at[k]] += 1;
        if (!with_sum) continue;
        tsc_kahan_add(&r->sum, &r->compensation, tsc_double_of(bits[k]));
        r->simple += tsc_double_of(bits[k]);
    }
}

/* An octet's bins since the last flush, lane by lane: flush_span's eight-lane twin. */
typedef struct {
    __m256i least, greatest;
} octet_span;

AVX512_INLINE octet_span empty_octet_span(void)
{
    octet_span span = {_mm256_set1_epi32(INT32_MAX), _mm256_set1_epi32(INT32_MIN)};
    return span;
}

AVX512_INLINE void flush_octet_span(tsc_store *st, octet_span *span)
{
    __m128i least_high = _mm256_extracti128_si256(span->least, 1);
    __m128i greatest_high = _mm256_extracti128_si256(span->greatest, 1);
    bin_span halves = {_mm_min_epi32(_mm256_castsi256_si128(span->least), least_high),
                       _mm_max_epi32(_mm256_castsi256_si128(span->greatest), greatest_high)};
    flush_span(st, &halves);
    *span = empty_octet_span();
}

/*
 * add_cubic_avx2 eight values a step: 32 registers hold every constant, an octet's min, max and count
 * stay in lanes until the run ends, and what is left a value is its bin count and its Kahan step, the
 * chain that bounds the loop (4 dependent adds a value). @return the values done (a multiple of 8).
 */
AVX512_INLINE size_t add_cubic_avx512_as(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                                         uint64_t *refused, int with_sum)
{
    const tsc_mapping *m = &s->mapping;
    const __m512i magnitude_bits = _mm512_set1_epi64(INT64_C(0x7fffffffffffffff));
    const __m512i significand = _mm512_set1_epi64(INT64_C(0x000fffffffffffff));
    const __m512i one_bits = _mm512_set1_epi64(INT64_C(0x3ff0000000000000));
    const __m512i two52_bits = _mm512_set1_epi64(INT64_C(0x4330000000000000));
    const __m512d lo = _mm512_set1_pd(m->min_indexable), hi = _mm512_set1_pd(m->max_indexable);
    const __m512d multiplier = _mm512_set1_pd(m->multiplier), norm_offset = _mm512_set1_pd(m->norm_offset);
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), bias = _mm512_set1_pd(0x1p52 + 1023);
    const __m512d a = _mm512_set1_pd(6.0 / 35.0), b = _mm512_set1_pd(-3.0 / 5.0), c = _mm512_set1_pd(10.0 / 7.0);
    const __m256i ones = _mm256_set1_epi32(1);
    tsc_store *stores[2] = {&s->pos, &s->neg};
    clean_view views[2] = {view_of(&s->pos), view_of(&s->neg)};
    octet_span spans[2] = {empty_octet_span(), empty_octet_span()};
    __m512d least = _mm512_set1_pd(INFINITY), greatest = _mm512_set1_pd(-INFINITY);
    uint64_t lane_values = 0;
    run_stats r = stats_load(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i raw = _mm512_loadu_si512((const void *)(bits + i));
        __m512i mb = _mm512_and_si512(raw, magnitude_bits);
        __m512d magnitude = _mm512_castsi512_pd(mb);
        __mmask8 indexable =
            _mm512_cmp_pd_mask(magnitude, lo, _CMP_GT_OQ) & _mm512_cmp_pd_mask(magnitude, hi, _CMP_LE_OQ);
        __m512d e = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(mb, 52), two52_bits)), bias);
        __m512i significand_of_one = _mm512_or_si512(_mm512_and_si512(mb, significand), one_bits);
        __m512d sv = _mm512_sub_pd(_mm512_castsi512_pd(significand_of_one), one);
        __m512d poly = _mm512_add_pd(_mm512_mul_pd(a, sv), b);
        poly = _mm512_add_pd(_mm512_mul_pd(poly, sv), c);
        __m512d x = _mm512_add_pd(_mm512_mul_pd(poly, sv), e);
        x = _mm512_add_pd(_mm512_mul_pd(x, multiplier), norm_offset);
        /* (int)x, less 1 below zero */
        __m256i truncated = _mm512_cvttpd_epi32(x);
        __m256i bins = _mm256_mask_sub_epi32(truncated, _mm512_cmp_pd_mask(x, zero, _CMP_LT_OQ), truncated, ones);
        unsigned negative = _mm512_movepi64_mask(raw), side = negative == 0xff;
        const clean_view *view = &views[side];
        __m256i first = _mm256_broadcastd_epi32(view->first), last = _mm256_broadcastd_epi32(view->last);
        __mmask8 outside = _mm256_cmpgt_epi32_mask(first, bins) | _mm256_cmpgt_epi32_mask(bins, last);
        if (TSC_LIKELY(indexable == 0xff && (negative == 0 || side) && outside == 0)) {
            __m512d v = _mm512_castsi512_pd(raw); /* neither NaN nor zero: min and max as the scalar tests */
            if (with_sum) least = _mm512_min_pd(v, least), greatest = _mm512_max_pd(v, greatest);
            spans[side].least = _mm256_min_epi32(spans[side].least, bins);
            spans[side].greatest = _mm256_max_epi32(spans[side].greatest, bins);
            lane_values += 8;
            count_octet(view->counts, bins, bits + i, &r, with_sum);
            continue;
        }
        fold_lanes(&r, &least, &greatest, &lane_values);
        flush_octet_span(stores[0], &spans[0]);
        flush_octet_span(stores[1], &spans[1]);
        stats_store(s, &r);
        _mm256_zeroupper();
        tsc_sketch_add_bits_scalar(s, bits + i, 8, nan_count, refused);
        r = stats_load(s);
        views[0] = view_of(stores[0]), views[1] = view_of(stores[1]); /* windows may have moved, clean ranges grown */
    }
    fold_lanes(&r, &least, &greatest, &lane_values);
    flush_octet_span(stores[0], &spans[0]);
    flush_octet_span(stores[1], &spans[1]);
    stats_store(s, &r);
    _mm256_zeroupper();
    return i;
}

AVX512 static size_t add_cubic_avx512(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                                      uint64_t *refused)
{
    return s->exact ? add_cubic_avx512_as(s, bits, n, nan_count, refused, 1)
                    : add_cubic_avx512_as(s, bits, n, nan_count, refused, 0);
}
#  endif
#endif

#ifdef TSC_HAVE_AVX2
/* tsc_avx512_here's CPUs have VL and DQ too; a virtual machine may still hide them. */
static int avx512_add_here(void)
{
    return tsc_avx512_here() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
#endif

size_t tsc_sketch_add_bits_isa(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                               uint64_t *refused, int isa)
{
    size_t done = 0;
#ifdef TSC_HAVE_AVX2
    if (s->mapping.kind != TSCHUNK_MAPPING_CUBIC) isa = TSC_ADD_SCALAR;
    if (isa == TSC_ADD_AUTO) isa = avx512_add_here() ? TSC_ADD_AVX512 : tsc_avx2_here() ? TSC_ADD_AVX2 : TSC_ADD_SCALAR;
#  ifndef TSC_NO_AVX512
    if (isa == TSC_ADD_AVX512 && avx512_add_here()) done = add_cubic_avx512(s, bits, n, nan_count, refused);
#  endif
    if (isa == TSC_ADD_AVX2 && tsc_avx2_here()) done = add_cubic_avx2(s, bits, n, nan_count, refused);
#else
    (void)isa;
#endif
    tsc_sketch_add_bits_scalar(s, bits + done, n - done, nan_count, refused);
    return done;
}

void tsc_sketch_add_bits(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count, uint64_t *refused)
{
    tsc_sketch_add_bits_isa(s, bits, n, nan_count, refused, TSC_ADD_AUTO);
}
