/* Internal: DDSketch mapping, stores and sketch layout shared by the sketch files. */
#ifndef TSCHUNK_SKETCH_INTERNAL_H
#define TSCHUNK_SKETCH_INTERNAL_H

#include <float.h>
#include <math.h>

#include "../common/common.h"

/* Counts add up to at most DBL_MAX, never infinity: the compact encoding holds finite counts only (our decoder
 * refuses others), so bins merged past it saturate; only absurd weights (near 1e308) get there. */
TSC_INLINE double tsc_count_add(double a, double b)
{
    double sum = a + b;
    return sum < DBL_MAX ? sum : DBL_MAX;
}

/* Exact zero test, +0.0 or -0.0 (-Wfloat-equal forbids ==; fpclassify costs ~10 instructions):
 * every bit but the sign is zero. */
TSC_INLINE int tsc_is_zero(double v) { return (tsc_bits_of(v) << 1) == 0; }

/* index(v) = trunc_floor(L(v) * multiplier + norm_offset); value(i) = L^-1((i - norm_offset) / multiplier) (1 + ra). */
typedef struct {
    tschunk_mapping_kind kind;
    double gamma, index_offset;     /* as constructed or decoded: what the mapping block carries */
    double multiplier, norm_offset;
    double relative_accuracy;
    double min_indexable, max_indexable;
} tsc_mapping;

/* From the memo of usual mappings when it holds the one asked for, else computed. */
size_t tsc_mapping_from_accuracy(tsc_mapping *m, tschunk_mapping_kind kind, double relative_accuracy);
size_t tsc_mapping_from_gamma(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset);
/* Always computed (log1p, pow); and the gamma and index offset that a relative accuracy gives. */
size_t tsc_mapping_compute(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset);
void tsc_mapping_gamma_for(tschunk_mapping_kind kind, double relative_accuracy, double *gamma, double *index_offset);
/* The memo's entry k < TSC_MEMO_ACCURACIES of a kind, and the relative accuracy it was built for. */
#define TSC_MEMO_ACCURACIES 5
const tsc_mapping *tsc_mapping_memo(tschunk_mapping_kind kind, size_t k, double *relative_accuracy);
int32_t tsc_mapping_index(const tsc_mapping *m, double value);
double tsc_mapping_value(const tsc_mapping *m, int32_t index);
int tsc_mapping_equal(const tsc_mapping *a, const tsc_mapping *b);

/* Window of max_bins counts. Slots [clean_lo, clean_lo + clean_len) hold the bins [min_index, max_index]
 * and zeros; the slots beyond were never written or hold stale counts, and nothing reads them. */
typedef struct {
    double *counts;
    int64_t offset;            /* index of counts[0] */
    int64_t min_index, max_index; /* non-empty range; min > max when empty */
    uint32_t clean_lo, clean_len;
} tsc_store;

#define TSC_SKETCH_STAGE 128u

struct tschunk_sketch {
    tsc_mapping mapping;
    tsc_store pos, neg;
    double zero_count;
    double count, sum, sum_compensation, min, max;
    double simple_sum; /* the plain sum beside Kahan's: the sign of a sum past the double range (tsc_sketch_sum) */
    uint32_t exact;     /* 0 once a stream without COUNT came in, or always (bins_only): the statistics are derived */
    uint32_t bins_only; /* tschunk_sketch_options.bins_only: exact stays 0 through clear */
    uint32_t fast_add;  /* TSC_FAST_ADD_*: which fast path of tschunk_sketch_add takes a value (tsc_sketch_set_exact) */
    uint32_t max_bins;
    uint32_t collapse_highest;
    tschunk_allocator allocator;
    /* Values an attached codec-1 encoder holds before its batch add (lib/chunk/encoder.c, up to
     * TSC_SKETCH_STAGE): held here, not in the encoder, so that a batch is as long as codec 2's groups. */
    uint64_t staged[TSC_SKETCH_STAGE];
};

/* A sketch with a mapping built already (by tsc_mapping_from_gamma): its log and pow are not redone. */
size_t tsc_sketch_create_with(tschunk_sketch **out, const tsc_mapping *mapping, const tschunk_sketch_options *opts);

void tsc_store_add_slow(tschunk_sketch *s, tsc_store *st, int64_t index, double count);
/* Move and clean st's window so that it holds [lo, hi] and the store's bins, when that spans at most
 * max_bins (no collapse): 1; else 0, nothing changed. */
int tsc_store_reserve(const tschunk_sketch *s, tsc_store *st, int64_t lo, int64_t hi);

/* Add count to a bin. Inline fast path: inside the clean slots (which never span more than max_bins), nothing to
 * collapse; an empty store's clean slots are all zero, so its first bin lands there too (0.57.1: 4 instructions
 * fewer an add than also testing for an empty store). The rest out of line, so that callers' loops keep their
 * registers. */
TSC_INLINE void tsc_store_add(tschunk_sketch *s, tsc_store *st, int64_t index, double count)
{
    uint64_t slot = (uint64_t)(index - st->offset);
    if (TSC_LIKELY(slot - st->clean_lo < st->clean_len)) {
        st->counts[slot] = tsc_count_add(st->counts[slot], count);
        if (index < st->min_index) st->min_index = index;
        if (index > st->max_index) st->max_index = index;
        return;
    }
    tsc_store_add_slow(s, st, index, count);
}

/* tsc_store_add_many's usual case, n > 0 bins in index order (as both libraries write them): the range from
 * the first and the last reserved in one call, then the adds with one range check a bin and no range tracking
 * (a decode into a new sketch spent 19 instructions a bin there, and three trips to the slow path; an empty
 * bin adds +0 to a clean slot). Returns the bins added: all, or those before the first out of that range; 0
 * when the range would collapse. */
TSC_INLINE size_t tsc_store_add_reserved(tschunk_sketch *s, tsc_store *st, const int64_t *index, const double *count,
                                         size_t n, double *total, int may_hold_empty)
{
    int64_t first = index[0] < index[n - 1] ? index[0] : index[n - 1];
    int64_t last = index[0] < index[n - 1] ? index[n - 1] : index[0];
    uint64_t first_slot = (uint64_t)(first - st->offset) - st->clean_lo;
    uint64_t last_slot = (uint64_t)(last - st->offset) - st->clean_lo;
    if (!(first_slot < st->clean_len && last_slot < st->clean_len) && !tsc_store_reserve(s, st, first, last))
        return 0; /* clean slots already (a range query's accumulator): no call */
    double *counts = st->counts + (first - st->offset), sum = total ? *total : 0;
    uint64_t span = (uint64_t)(last - first);
    size_t k = 0;
    for (; k < n; k++) {
        uint64_t slot = (uint64_t)(index[k] - first);
        if (!TSC_LIKELY(slot <= span)) break;
        if (total) sum += count[k];
        counts[slot] = tsc_count_add(counts[slot], count[k]);
    }
    if (total) *total = sum;
    int64_t lo = first, hi = last;
    if (k < n) { /* out of order: the range of the non-empty bins added */
        lo = INT64_MAX, hi = INT64_MIN;
        for (size_t j = 0; j < k; j++) {
            if (may_hold_empty && tsc_is_zero(count[j])) continue;
            lo = index[j] < lo ? index[j] : lo;
            hi = index[j] > hi ? index[j] : hi;
        }
    } else if (may_hold_empty) {
        /* empty ends off: a slot of [first, last] that is not zero now holds a bin added or one the store
         * held, and in either case the store's range reaches it */
        while (lo <= hi && tsc_is_zero(counts[lo - first])) lo++;
        while (hi >= lo && tsc_is_zero(counts[hi - first])) hi--;
    }
    if (lo > hi) return k; /* every bin added was empty */
    if (lo < st->min_index) st->min_index = lo;
    if (hi > st->max_index) st->max_index = hi;
    return k;
}

/* tsc_store_add over n bins, zero counts skipped (may_hold_empty: only the AVX-512 bin kernel writes them), the
 * counts also added to *total in order (a constant NULL: no sum). First tsc_store_add_reserved; the bins it leaves
 * (a stretch that turns back or would collapse) one by one, the store's range and clean window kept in registers
 * in between (the window as the bin index of its first slot and a pointer to that slot: one subtraction and one
 * compare a bin; an empty store gets no window, so that its first bin sets its range in the slow path). */
TSC_INLINE void tsc_store_add_many(tschunk_sketch *s, tsc_store *st, const int64_t *index, const double *count,
                                   size_t n, double *total, int may_hold_empty)
{
    size_t k = n > 0 ? tsc_store_add_reserved(s, st, index, count, n, total, may_hold_empty) : 0;
    if (TSC_LIKELY(k == n)) return; /* the usual case: nothing left, the store's range set already */
    int64_t lo = st->min_index, hi = st->max_index;
    int64_t first = st->offset + st->clean_lo;
    uint64_t len = lo <= hi ? st->clean_len : 0;
    double *window = st->counts + st->clean_lo;
    double sum = total ? *total : 0;
    for (; k < n; k++) {
        if (total) sum += count[k]; /* an empty bin adds +0: no change */
        if (may_hold_empty && tsc_is_zero(count[k])) continue;
        uint64_t slot = (uint64_t)(index[k] - first);
        if (TSC_LIKELY(slot < len)) {
            window[slot] = tsc_count_add(window[slot], count[k]);
            lo = index[k] < lo ? index[k] : lo;
            hi = index[k] > hi ? index[k] : hi;
            continue;
        }
        st->min_index = lo;
        st->max_index = hi;
        tsc_store_add_slow(s, st, index[k], count[k]);
        lo = st->min_index;
        hi = st->max_index;
        first = st->offset + st->clean_lo;
        len = st->clean_len;
        window = st->counts + st->clean_lo;
    }
    st->min_index = lo;
    st->max_index = hi;
    if (total) *total = sum;
}

/* Bit k set: counts[k] is not +-0, for k < n <= 64 (SSE2 on x86-64, and its scalar twin). */
uint64_t tsc_occupied_mask(const double *counts, unsigned n);
uint64_t tsc_occupied_mask_scalar(const double *counts, unsigned n);
/* The same with AVX2, eight bins a step (where tsc_avx2_here; elsewhere the SSE2 one). */
#ifdef TSC_HAVE_AVX2
uint64_t tsc_occupied_mask_avx2(const double *counts, unsigned n);
#else
TSC_INLINE uint64_t tsc_occupied_mask_avx2(const double *counts, unsigned n) { return tsc_occupied_mask(counts, n); }
#endif

/*
 * The AVX-512 bin writers (bins512.c): from counts[0, n), into *out (room for each bin at its longest
 * plus 64 bytes), as many blocks of eight bins as they can; the bins written are returned and *out
 * advanced. The contiguous form writes every count; the sparse form, bin k at index first + k, writes
 * the non-empty ones as index deltas from *prev (updated) and counts.
 */
#ifdef TSC_HAVE_AVX2
size_t tsc_put_contiguous_avx512(uint8_t **out, const double *counts, size_t n);
size_t tsc_put_sparse_avx512(uint8_t **out, const double *counts, size_t n, int64_t first, int64_t *prev);
#else /* no kernels built (not x86-64 with GCC or clang): they take nothing, the scalar loops do it all */
TSC_INLINE size_t tsc_put_contiguous_avx512(uint8_t **out, const double *counts, size_t n)
{
    (void)out, (void)counts, (void)n;
    return 0;
}
TSC_INLINE size_t tsc_put_sparse_avx512(uint8_t **out, const double *counts, size_t n, int64_t first, int64_t *prev)
{
    (void)out, (void)counts, (void)n, (void)first, (void)prev;
    return 0;
}
#endif

/*
 * The AVX-512 bin reader (bins512.c): up to n bins from src[0, avail), index deltas and counts
 * (has_deltas; *index the bin before) or contiguous counts (*index the first's bin, step apart), as many
 * as read_bin_run would take before the first it must read itself (a long varint, a bad index, the
 * input's end). Writes their indices and counts, empty bins included (room for n + 8 of each); updates
 * *index; returns the bins taken, and the bytes they took in *used.
 */
#ifdef TSC_HAVE_AVX2
size_t tsc_get_bins_avx512(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                           int64_t *index, int64_t *indices, double *counts);
#else
TSC_INLINE size_t tsc_get_bins_avx512(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step,
                                      size_t *used, int64_t *index, int64_t *indices, double *counts)
{
    (void)src, (void)avail, (void)n, (void)has_deltas, (void)step, (void)index, (void)indices, (void)counts;
    *used = 0;
    return 0;
}
#endif

/*
 * The scalar bin kernel (codec.c), the AVX-512 one's twin for the other CPUs: the same contract, for bins
 * whose index delta is one byte (-64 to 63: neighbouring bins, the usual case) and whose count takes at
 * most 8 bytes, to the input's end (its last 64 bytes read from a copy padded with bytes 0x80); empty bins
 * are not written, *written counts those that are (room for n of each). It keeps the input's position and
 * the index in registers, where the one-at-a-time reader keeps them in memory that every byte store of its
 * log may alias.
 */
size_t tsc_get_bins_scalar(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                           int64_t *index, int64_t *indices, double *counts, size_t *written);

/* The scalar kernel with BMI2's pext gathering a count's 7-bit groups (one instruction for twelve), on CPUs
 * with BMI2 (tsc_pext_here); elsewhere the scalar kernel itself. */
#ifdef TSC_HAVE_AVX2
size_t tsc_get_bins_pext(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                         int64_t *index, int64_t *indices, double *counts, size_t *written);
#else
TSC_INLINE size_t tsc_get_bins_pext(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step,
                                    size_t *used, int64_t *index, int64_t *indices, double *counts, size_t *written)
{
    return tsc_get_bins_scalar(src, avail, n, has_deltas, step, used, index, indices, counts, written);
}
#endif

/*
 * The AVX2 bin kernel (tsc_get_bins_avx2): the pext kernel, with blocks of four records read by AVX2 and BMI2
 * (bins_avx2.c) wherever four follow that fit them; the same contract, empty bins not written.
 * tsc_bins_blocks_avx2 takes up to n records (n >= 4 for any) in whole blocks, of one-byte index deltas
 * and counts of at most 8 bytes (in an input of 32 bytes or more; its last 40 read by loads shifted to keep
 * within it), and stops before the first block it cannot take whole; it writes the non-empty bins (*written
 * of them) and checks no index (the caller's run cannot leave int32). tsc_unzigzag_byte: a one-byte zigzag
 * varint's value.
 */
#ifdef TSC_HAVE_AVX2
size_t tsc_get_bins_avx2(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                         int64_t *index, int64_t *indices, double *counts, size_t *written);
size_t tsc_bins_blocks_avx2(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                            int64_t *index, int64_t *indices, double *counts, size_t *written);
#else
#  define tsc_get_bins_avx2 tsc_get_bins_pext /* the scalar kernel, as above */
TSC_INLINE size_t tsc_bins_blocks_avx2(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step,
                                       size_t *used, int64_t *index, int64_t *indices, double *counts,
                                       size_t *written)
{
    (void)src, (void)avail, (void)n, (void)has_deltas, (void)step, (void)index, (void)indices, (void)counts;
    *used = 0;
    *written = 0;
    return 0;
}
#endif
extern const int8_t tsc_unzigzag_byte[128];

/* BMI2, which tsc_get_bins_pext and the pdep writer need. */
TSC_INLINE int tsc_pext_here(void)
{
#ifdef TSC_HAVE_AVX2
    return __builtin_cpu_supports("bmi2");
#else
    return 0;
#endif
}

/* BMI2 with a fast pext and pdep: not AMD's families 15h and 17h (Excavator, Zen 1 and 2), whose microcoded
 * pext and pdep take a cycle or more for each bit of the mask. (Hygon's Zen-based family 18h is not among the
 * families checked: it would take the pext kernel and the pdep writer, correct and slower.) */
TSC_INLINE int tsc_pext_fast_here(void)
{
#ifdef TSC_HAVE_AVX2
    return tsc_pext_here() && !__builtin_cpu_is("amdfam15h") && !__builtin_cpu_is("amdfam17h");
#else
    return 0;
#endif
}

/* AVX-512 with byte compress (VBMI2) as well: Ice Lake and later, Zen 4 and later. */
TSC_INLINE int tsc_sketch_simd_here(void)
{
#if defined(TSC_HAVE_AVX2) && !defined(TSC_NO_AVX512)
    return tsc_avx512_here() && __builtin_cpu_supports("avx512vbmi2");
#else
    return 0;
#endif
}

/* How an encoder writes bins: the scalar loops (the twins the tests hold the others to), the scalar loops
 * spreading a count's groups with one pdep, or the AVX-512 kernels (with pdep for the blocks they leave). */
enum { TSC_PUT_SCALAR = 0, TSC_PUT_AVX512 = 1, TSC_PUT_PDEP = 2 };

/* The fastest bin writer this CPU runs (every CPU with AVX-512 VBMI2 has a fast pdep). */
TSC_INLINE int tsc_sketch_writer_here(void)
{
    return tsc_sketch_simd_here() ? TSC_PUT_AVX512 : tsc_pext_fast_here() ? TSC_PUT_PDEP : TSC_PUT_SCALAR;
}

/* tschunk_sketch_encode with the given bin writer (TSC_PUT_*; AVX512 and PDEP only where the CPU has them). */
size_t tsc_sketch_encode_isa(const tschunk_sketch *s, void *dst, size_t capacity, unsigned flags, int writer);

/*
 * How a decoder reads runs of bins: one bin at a time (the reference the tests hold the others to), through
 * the scalar bin kernel (codec.c: eight-byte loads, the input's position in a register), its pext twin, the
 * AVX2 one (the pext kernel with blocks of four, bins_avx2.c) or the AVX-512 one (bins512.c). Every kernel
 * stops before a bin it cannot take, which the one-at-a-time reader then reads or refuses.
 */
enum {
    TSC_BINS_ONE_AT_A_TIME = 0,
    TSC_BINS_AVX512 = 1,
    TSC_BINS_SCALAR_KERNEL = 2,
    TSC_BINS_PEXT_KERNEL = 3,
    TSC_BINS_AVX2_KERNEL = 4
};

/* Whether this CPU runs the reader (the build's too: without the x86 kernels, the AVX2 and pext readers are
 * the scalar one). */
TSC_INLINE int tsc_sketch_reader_runs_here(int reader)
{
    return reader == TSC_BINS_AVX512        ? tsc_sketch_simd_here()
           : reader == TSC_BINS_PEXT_KERNEL ? tsc_pext_here()
           : reader == TSC_BINS_AVX2_KERNEL ? tsc_pext_here() && tsc_avx2_here()
                                            : 1;
}

/* The fastest bin reader this CPU runs. With TSC_BINS_AVX512 or TSC_BINS_AVX2_KERNEL the runs too short for
 * them take the pext kernel (codec.c, read_bin_run): every CPU with AVX-512 VBMI2 has a fast pext. */
TSC_INLINE int tsc_sketch_reader_here(void)
{
    return tsc_sketch_simd_here()    ? TSC_BINS_AVX512
           : tsc_pext_fast_here() ? (tsc_avx2_here() ? TSC_BINS_AVX2_KERNEL : TSC_BINS_PEXT_KERNEL)
                                  : TSC_BINS_SCALAR_KERNEL;
}

/* The decoder's checking pass keeps up to this many bins (17 bytes each, on the stack: about 17.5 KiB), so that
 * the committing pass adds them without parsing the stream again; a stream with more is parsed twice. 0.31.0:
 * 1,024 bins, where 256 made a 100,000-value lognormal(0, 2) sketch (about 800 bins) decode a third slower. */
#define TSC_SKETCH_LOGGED_BINS 1024

/* tschunk_sketch_decode_merge with the given bin reader (TSC_BINS_AVX512 and TSC_BINS_PEXT_KERNEL only where
 * the CPU has them). */
size_t tsc_sketch_decode_merge_isa(tschunk_sketch *s, const void *src, size_t size, size_t *error_offset,
                                   int reader);

/* One step of the Kahan-compensated sum both reference libraries keep (the same bits as theirs). */
TSC_INLINE void tsc_kahan_add(double *sum, double *compensation, double x)
{
    double term = x - *compensation, next = *sum + term;
    *compensation = (next - *sum) - term;
    *sum = next;
}

/* The exact statistics' sum as both reference libraries give it (their getSum / Sum): Kahan's sum plus its
 * compensation, or, when that is NaN from a sum that overflowed (inf - inf in the compensation), the plain sum's
 * infinity with its sign. */
TSC_INLINE double tsc_sketch_sum(const tschunk_sketch *s)
{
    double sum = s->sum + s->sum_compensation;
    return isnan(sum) && isinf(s->simple_sum) ? s->simple_sum : sum;
}

/* Add to the exact statistics: count, Kahan-compensated sum (and the plain one), min, max. */
TSC_INLINE void tsc_accept_stats(tschunk_sketch *s, double value, double weight)
{
    tsc_kahan_add(&s->sum, &s->sum_compensation, value * weight);
    s->simple_sum += value * weight;
    s->count += weight;
    if (value < s->min) s->min = value;
    if (value > s->max) s->max = value;
}

/* The count, and the other statistics only while they are exact: derived ones are never read (a sketch becomes
 * exact again only when cleared, which zeroes them), and a plain sketch's add skips Kahan's chain. */
TSC_INLINE void tsc_accept_stats_if_exact(tschunk_sketch *s, double value, double weight)
{
    if (TSC_LIKELY(s->exact)) tsc_accept_stats(s, value, weight);
    else s->count += weight;
}

/* The cubic index of an indexable magnitude (no saturation needed): sketches-java's formula inline. */
TSC_INLINE int64_t tsc_cubic_index(const tsc_mapping *m, double magnitude)
{
    uint64_t b;
    memcpy(&b, &magnitude, 8);
    double e = (double)((int64_t)(b >> 52) - 1023); /* magnitude > 0: no sign bit */
    uint64_t one = UINT64_C(0x3ff0000000000000), sb = (b & UINT64_C(0x000fffffffffffff)) | one;
    double sp1;
    memcpy(&sp1, &sb, 8);
    double sv = sp1 - 1;
    double x = (((6.0 / 35.0) * sv + (-3.0 / 5.0)) * sv + 10.0 / 7.0) * sv + e;
    x = x * m->multiplier + m->norm_offset;
    return x >= 0 ? (int64_t)x : (int64_t)x - 1;
}

/* tschunk_sketch_add's fast paths: the cubic mapping with exact statistics, or with the count alone (derived
 * statistics). One field says which, so that the exact path's first compare is the one it had before there
 * were two (a test of `exact` inside cost its single adds 0.4 ns, 0.57.0). */
enum { TSC_FAST_ADD_NONE, TSC_FAST_ADD_EXACT, TSC_FAST_ADD_COUNT };

/* Every change of exact goes through here, to keep fast_add with it. */
TSC_INLINE void tsc_sketch_set_exact(tschunk_sketch *s, uint32_t exact)
{
    s->exact = exact;
    s->fast_add = s->mapping.kind != TSCHUNK_MAPPING_CUBIC ? TSC_FAST_ADD_NONE
                : exact                                    ? TSC_FAST_ADD_EXACT
                                                           : TSC_FAST_ADD_COUNT;
}

/*
 * tschunk_sketch_add's hot case, inline for the summary push: weight 1, the sketch on fast path `path`, a
 * magnitude the mapping indexes, a bin in the clean slots (as tsc_store_add). @return 1 when added, 0 when the
 * general path must run (nothing changed then).
 */
TSC_INLINE int tsc_sketch_add_fast_as(tschunk_sketch *s, double value, uint32_t path)
{
    double magnitude = fabs(value);
    if (!TSC_LIKELY(s->fast_add == path && magnitude > s->mapping.min_indexable &&
                    magnitude <= s->mapping.max_indexable))
        return 0;
    tsc_store *st = value > 0 ? &s->pos : &s->neg;
    int64_t index = tsc_cubic_index(&s->mapping, magnitude);
    uint64_t slot = (uint64_t)(index - st->offset);
    if (!TSC_LIKELY(slot - st->clean_lo < st->clean_len)) return 0;
    st->counts[slot] += 1;
    if (index < st->min_index) st->min_index = index;
    if (index > st->max_index) st->max_index = index;
    if (path == TSC_FAST_ADD_EXACT) tsc_accept_stats(s, value, 1);
    else s->count += 1;
    return 1;
}

/* Either fast path, the exact one first. */
TSC_INLINE int tsc_sketch_add_fast(tschunk_sketch *s, double value)
{
    return tsc_sketch_add_fast_as(s, value, TSC_FAST_ADD_EXACT) || tsc_sketch_add_fast_as(s, value, TSC_FAST_ADD_COUNT);
}

/* Add values given as bits, in order, as tschunk_sketch_add one by one (NaNs counted in nan_count, other
 * refused values in refused): with the cubic mapping eight values a step with AVX-512 or four with AVX2
 * (add_simd.c), and their scalar twin (sketch.c). */
#define TSC_SKETCH_RUN 128u /* values copied at a time by tschunk_sketch_add_many */
void tsc_sketch_add_bits(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count, uint64_t *refused);
/* The same for doubles, copied to their bit patterns TSC_SKETCH_RUN at a time (tschunk_sketch_add_many, the range
 * queries' decoded chunks). */
void tsc_sketch_add_values(tschunk_sketch *s, const double *values, size_t n, uint64_t *nan_count, uint64_t *refused);
void tsc_sketch_add_bits_scalar(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                                uint64_t *refused);
/* The batch add with the given kernel (TSC_ADD_AUTO: the best the CPU has; a kernel it lacks, or another
 * mapping, adds value by value), for the tests to run each on the same values. @return the values the
 * kernel added (the rest went value by value). */
enum { TSC_ADD_AUTO, TSC_ADD_SCALAR, TSC_ADD_AVX2, TSC_ADD_AVX512 };
size_t tsc_sketch_add_bits_isa(tschunk_sketch *s, const uint64_t *bits, size_t n, uint64_t *nan_count,
                               uint64_t *refused, int isa);

/* Quantile without the clamp to the exact [min, max] (sketches-java's plain DDSketch). */
size_t tsc_sketch_quantile_unclamped(const tschunk_sketch *s, double q, double *value);

/* tschunk_summary_combine; with sum_alone, the blob as releases before 0.55.0 wrote it: Kahan's sum without its
 * compensation (verify accepts a stored block summary of either kind: blocks.c). */
size_t tsc_summary_combine_as(tschunk_sketch *scratch, const tschunk_chunk_ref *chunks, size_t n, void *dst,
                              size_t capacity, int sum_alone);
/* A block summary blob (version 2) said to combine `chunks` chunks, against [from, to]: 1 when it
 * answered (merged wholly inside, or skipped wholly outside; st updated), 0 when the chunks must
 * answer instead (cut by an end, or a blob that does not parse, combines another number of chunks or
 * holds a sketch that does not decode). */
int tsc_summary_take_block(tschunk_sketch *acc, const void *blob, size_t size, size_t chunks, int64_t from,
                           int64_t to, tschunk_range_stats *st);

#endif
