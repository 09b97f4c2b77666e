/*
 * DDSketch compact encoding (sketches-go PR #42 / sketches-java PR #58 and
 * later): a sequence of blocks, each a flag byte (type in bits 0-1, subflag
 * above) and a payload. README "DDSketch" has the layout; this file writes
 * what sketches-java writes, byte for byte, and reads what either library
 * writes, more strictly than both.
 */
#include <float.h>
#include <math.h>
#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#endif

enum {
    FLAG_ZERO_COUNT = 0x04,
    FLAG_COUNT = 0xa0,
    FLAG_SUM = 0x84,
    FLAG_MIN = 0x88,
    FLAG_MAX = 0x8c,
    TYPE_FEATURE = 0,
    TYPE_POSITIVE = 1,
    TYPE_MAPPING = 2,
    TYPE_NEGATIVE = 3,
    BINS_INDEX_DELTAS_AND_COUNTS = 1,
    BINS_INDEX_DELTAS = 2,
    BINS_CONTIGUOUS = 3,
};


/* ---- primitive writers: every one checks room and returns the new position ---- */
typedef struct {
    uint8_t *dst;
    size_t cap, pos;
    int overflow;
} out_buf;

TSC_INLINE void put_byte(out_buf *o, uint8_t b)
{
    if (o->pos < o->cap) o->dst[o->pos] = b;
    else o->overflow = 1;
    o->pos++;
}

/* Unsigned varint, at most 9 bytes: the 9th carries 8 full bits. */
static void put_uvarint(out_buf *o, uint64_t v)
{
    for (int i = 0; i < 8 && v >= 0x80; i++) {
        put_byte(o, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(o, (uint8_t)v);
}

static void put_varint(out_buf *o, int64_t v) { put_uvarint(o, tsc_zigzag(v)); }

/* Bytes of a 9-byte-capped varint whose significant bits, counted from the far end, leave z zero bits:
 * min(9, ceil((64 - z) / 7)). Both varint forms read it, from the leading or the trailing zeros. */
static const uint8_t size_by_zeros[64] = {
    9, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5,
    5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};

/* OR-ing bit 0 makes 0 count as one significant bit: one byte. */
static unsigned uvarint_size(uint64_t v) { return size_by_zeros[__builtin_clzll(v | 1)]; }

static unsigned varint_size(int64_t v) { return uvarint_size(tsc_zigzag(v)); }

#ifdef TSC_HAVE_AVX2
/* BMI2's pext and pdep as inline asm, which needs no target attribute on the functions it is inlined into:
 * only the pext bin kernel and the pdep writer run them, on CPUs with BMI2 (tsc_pext_fast_here). */
TSC_INLINE uint64_t pext64(uint64_t x, uint64_t mask)
{
    uint64_t r;
    __asm__("pextq %2, %1, %0" : "=r"(r) : "r"(x), "r"(mask));
    return r;
}

TSC_INLINE uint64_t pdep64(uint64_t x, uint64_t mask)
{
    uint64_t r;
    __asm__("pdepq %2, %1, %0" : "=r"(r) : "r"(x), "r"(mask));
    return r;
}
#endif

static uint64_t rotl6(uint64_t x) { return x << 6 | x >> 58; }
static uint64_t rotr6(uint64_t x) { return x >> 6 | x << 58; }

/* varfloat64 writes x = rotl6(bits(v + 1) - bits(1)) 7 bits a byte from the top, while bits remain;
 * a 9th byte, when reached, carries the last 8 bits whole. */
TSC_INLINE uint64_t varfloat_x(double v) { return rotl6(tsc_bits_of(v + 1.0) - tsc_bits_of(1.0)); }

/* varfloat64 fills bytes from the top, so its size counts trailing zeros. x = 0 (v = 0) takes one byte:
 * OR-ing bit 63 makes ctz 63 for it without a branch. */
TSC_INLINE unsigned varfloat_x_size(uint64_t x) { return size_by_zeros[__builtin_ctzll(x | UINT64_C(1) << 63)]; }

/* The 7-bit groups of y's low 56 bits spread one to a byte: three halving steps instead of a loop, or one
 * pdep. */
TSC_INLINE uint64_t spread_groups(uint64_t y, int pdep)
{
#ifdef TSC_HAVE_AVX2
    if (pdep) return pdep64(y, UINT64_C(0x7f7f7f7f7f7f7f7f));
#else
    (void)pdep;
#endif
    y = (y & UINT64_C(0x000000000fffffff)) | (y & UINT64_C(0x00fffffff0000000)) << 4;
    y = (y & UINT64_C(0x00003fff00003fff)) | (y & UINT64_C(0x0fffc0000fffc000)) << 2;
    return (y & UINT64_C(0x007f007f007f007f)) | (y & UINT64_C(0x3f803f803f803f80)) << 1;
}

/*
 * The first 8 bytes of x's varfloat64, first byte in the most significant: the 7-bit groups of x's top
 * 56 bits one to a byte, continuation bits on the first size - 1 bytes. Bytes past size are zero, since x
 * has no bits below its last group.
 */
TSC_INLINE uint64_t varfloat_word(uint64_t x, unsigned size, int pdep)
{
    /* by size (1-9): continuation bits on the first min(size - 1, 8) bytes from the top (a load where the
     * mask took six instructions) */
    static const uint64_t continued[10] = {0,
                                           0,
                                           UINT64_C(0x8000000000000000),
                                           UINT64_C(0x8080000000000000),
                                           UINT64_C(0x8080800000000000),
                                           UINT64_C(0x8080808000000000),
                                           UINT64_C(0x8080808080000000),
                                           UINT64_C(0x8080808080800000),
                                           UINT64_C(0x8080808080808000),
                                           UINT64_C(0x8080808080808080)};
    return spread_groups(x >> 8, pdep) | continued[size];
}

/* Up to 8 bytes from the top of word: one store when 8 bytes of room remain. */
TSC_INLINE void put_word(out_buf *o, uint64_t word, unsigned size)
{
    if (o->pos <= o->cap && o->cap - o->pos >= 8) {
        tsc_store64_be(o->dst + o->pos, word);
        o->pos += size;
        return;
    }
    for (unsigned i = 0; i < size; i++) put_byte(o, (uint8_t)(word >> (56 - 8 * i)));
}

TSC_INLINE void put_varfloat(out_buf *o, double v)
{
    uint64_t x = varfloat_x(v);
    unsigned size = varfloat_x_size(x);
    put_word(o, varfloat_word(x, size, 0), size > 8 ? 8 : size);
    if (size > 8) put_byte(o, (uint8_t)x);
}

static void put_f64(out_buf *o, double v)
{
    uint64_t b = tsc_bits_of(v);
    for (int i = 0; i < 8; i++) put_byte(o, (uint8_t)(b >> (8 * i)));
}

static uint8_t mapping_flag(tschunk_mapping_kind kind) { return (uint8_t)(TYPE_MAPPING | (unsigned)kind << 2); }

/*
 * Bit k: counts[k] is a non-empty bin (+-0 are empty), for k < n <= 64. Stores are mostly empty bins
 * between occupied ones in no regular pattern, so the encoder walks set bits instead of branching on
 * every bin. SSE2 is part of x86-64, so its form needs no dispatch; the tests compare it with the scalar
 * twin.
 */
uint64_t tsc_occupied_mask_scalar(const double *counts, unsigned n)
{
    uint64_t mask = 0;
    for (unsigned k = 0; k < n; k++) mask |= (uint64_t)((tsc_bits_of(counts[k]) << 1) != 0) << k;
    return mask;
}

uint64_t tsc_occupied_mask(const double *counts, unsigned n)
{
#if defined(__SSE2__)
    uint64_t mask = 0;
    unsigned k = 0;
    const __m128d zero = _mm_setzero_pd(); /* compares equal to -0.0 as well */
    for (; k + 4 <= n; k += 4) {
        unsigned low = (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(counts + k), zero));
        unsigned high = (unsigned)_mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(counts + k + 2), zero));
        mask |= (uint64_t)(low | high << 2) << k;
    }
    return k < n ? mask | tsc_occupied_mask_scalar(counts + k, n - k) << k : mask;
#else
    return tsc_occupied_mask_scalar(counts, n);
#endif
}

#ifdef TSC_HAVE_AVX2
/* tsc_occupied_mask eight bins a step (the tail through it). */
__attribute__((target("avx2"))) uint64_t tsc_occupied_mask_avx2(const double *counts, unsigned n)
{
    uint64_t mask = 0;
    unsigned k = 0;
    const __m256d zero = _mm256_setzero_pd();
    for (; k + 8 <= n; k += 8) {
        __m256d low = _mm256_cmp_pd(_mm256_loadu_pd(counts + k), zero, _CMP_NEQ_UQ);
        __m256d high = _mm256_cmp_pd(_mm256_loadu_pd(counts + k + 4), zero, _CMP_NEQ_UQ);
        unsigned bits = (unsigned)_mm256_movemask_pd(low) | (unsigned)_mm256_movemask_pd(high) << 4;
        mask |= (uint64_t)bits << k;
    }
    return k < n ? mask | tsc_occupied_mask(counts + k, n - k) << k : mask;
}
#endif

/* The occupancy masks of a store's first MASKS_KEPT * 64 bins from min_index, computed once by
 * occupied_bins and read again by the walks (a store of the default 2,048 bins fits whole). */
#define MASKS_KEPT 32
typedef struct {
    uint64_t mask[MASKS_KEPT];
    size_t n;
} kept_masks;

/* The mask of the 64 bins from base (fewer at the store's end). */
static uint64_t mask_at(const tsc_store *st, int64_t base)
{
    uint64_t left = (uint64_t)(st->max_index - base + 1);
    const double *counts = st->counts + (base - st->offset);
    unsigned n = left < 64 ? (unsigned)left : 64;
    return tsc_avx2_here() ? tsc_occupied_mask_avx2(counts, n) : tsc_occupied_mask(counts, n);
}

/* Walks a store's non-empty bins in index order, 64 bins a mask. */
typedef struct {
    const tsc_store *st;
    const kept_masks *kept;
    size_t k; /* masks taken */
    int64_t base;
    uint64_t mask;
} occupied_walk;

static occupied_walk walk_start(const tsc_store *st, const kept_masks *kept)
{
    occupied_walk w = {st, kept, 0, st->min_index - 64, 0};
    return w;
}

TSC_INLINE int walk_next(occupied_walk *w, int64_t *index)
{
    while (!w->mask) {
        w->base += 64;
        if (w->base > w->st->max_index) return 0;
        w->mask = w->k < w->kept->n ? w->kept->mask[w->k] : mask_at(w->st, w->base);
        w->k++;
    }
    *index = w->base + tsc_ctz64(w->mask);
    w->mask &= w->mask - 1;
    return 1;
}

/* Room for `bytes` more, so that a loop may write through a pointer of its own. Through o, each byte
 * store could alias o->pos (a char store aliases anything), which would be reloaded after each one. */
static int has_room(const out_buf *o, uint64_t bytes) { return o->pos <= o->cap && o->cap - o->pos >= bytes; }

/* A count's varfloat64 at out, with room for 9 bytes: the end of it. */
TSC_INLINE uint8_t *put_varfloat_at(uint8_t *out, double v, int pdep)
{
    uint64_t x = varfloat_x(v);
    unsigned size = varfloat_x_size(x);
    tsc_store64_be(out, varfloat_word(x, size, pdep));
    if (TSC_UNLIKELY(size > 8)) out[8] = (uint8_t)x;
    return out + size;
}

/* A bin's index delta (from prev) and count at out, with room for 18 bytes. */
TSC_INLINE uint8_t *put_sparse_bin_at(uint8_t *out, int64_t index, int64_t prev, double count, int pdep)
{
    uint64_t delta = tsc_zigzag(index - prev);
    for (int b = 0; b < 8 && delta >= 0x80; b++, delta >>= 7) *out++ = (uint8_t)(delta | 0x80);
    *out++ = (uint8_t)delta;
    return put_varfloat_at(out, count, pdep);
}

/* Counts [from, to) at out (room for 9 bytes each); pdep a constant at each call, one loop for each. */
TSC_INLINE uint8_t *put_counts_at(uint8_t *out, const double *counts, uint64_t from, uint64_t to, int pdep)
{
    for (uint64_t k = from; k < to; k++) out = put_varfloat_at(out, counts[k], pdep);
    return out;
}

/* A store's non-empty bins from the walk's position on, as index deltas and counts at out. */
TSC_INLINE uint8_t *put_walked_bins_at(uint8_t *out, occupied_walk *w, int64_t *prev, int pdep)
{
    int64_t i;
    for (; walk_next(w, &i); *prev = i) out = put_sparse_bin_at(out, i, *prev, w->st->counts[i - w->st->offset], pdep);
    return out;
}

/* The kernels write 64 bytes a step, of which they keep at most 64. */
#define KERNEL_SLACK 64

/* Contiguous counts over [min, max]: an empty bin is one zero byte. Chosen when few bins are empty, so
 * it writes every bin rather than walking the occupied ones. */
static void put_dense_bins(out_buf *o, const tsc_store *st, int writer)
{
    const double *counts = st->counts + (st->min_index - st->offset);
    uint64_t window = (uint64_t)(st->max_index - st->min_index + 1), k = 0;
    if (!has_room(o, KERNEL_SLACK) || (o->cap - o->pos - KERNEL_SLACK) / 9 < window) {
        for (; k < window; k++) put_varfloat(o, counts[k]);
        return;
    }
    uint8_t *out = o->dst + o->pos, *start = out;
    if (writer == TSC_PUT_SCALAR) {
        out = put_counts_at(out, counts, 0, window, 0);
    } else if (writer == TSC_PUT_PDEP) {
        out = put_counts_at(out, counts, 0, window, 1);
    } else {
        while (k < window) { /* the kernel, then the block it stopped at */
            k += tsc_put_contiguous_avx512(&out, counts + k, (size_t)(window - k));
            uint64_t end = k + 8 < window ? k + 8 : window;
            out = put_counts_at(out, counts, k, end, 1);
            k = end;
        }
    }
    o->pos += (size_t)(out - start);
}

/* Index deltas and counts over the non-empty bins. */
static void put_sparse_bins(out_buf *o, const tsc_store *st, const kept_masks *kept, uint64_t nonempty, int writer)
{
    int64_t prev = 0, i;
    if (!has_room(o, KERNEL_SLACK) || (o->cap - o->pos - KERNEL_SLACK) / 18 < nonempty) {
        for (occupied_walk w = walk_start(st, kept); walk_next(&w, &i); prev = i) {
            uint64_t delta = tsc_zigzag(i - prev);
            if (TSC_LIKELY(delta < 0x80)) put_byte(o, (uint8_t)delta);
            else put_uvarint(o, delta);
            put_varfloat(o, st->counts[i - st->offset]);
        }
        return;
    }
    uint8_t *out = o->dst + o->pos, *start = out;
    if (writer != TSC_PUT_AVX512) {
        occupied_walk w = walk_start(st, kept);
        out = writer == TSC_PUT_PDEP ? put_walked_bins_at(out, &w, &prev, 1) : put_walked_bins_at(out, &w, &prev, 0);
    } else {
        const double *counts = st->counts + (st->min_index - st->offset);
        uint64_t window = (uint64_t)(st->max_index - st->min_index + 1);
        for (uint64_t k = 0; k < window; k += 8) {
            k += tsc_put_sparse_avx512(&out, counts + k, (size_t)(window - k), st->min_index + (int64_t)k, &prev);
            if (k >= window) break;
            unsigned len = window - k < 8 ? (unsigned)(window - k) : 8; /* the block it stopped at */
            for (uint64_t mask = tsc_occupied_mask(counts + k, len); mask; mask &= mask - 1, prev = i) {
                i = st->min_index + (int64_t)(k + tsc_ctz64(mask));
                out = put_sparse_bin_at(out, i, prev, st->counts[i - st->offset], 1);
            }
        }
    }
    o->pos += (size_t)(out - start);
}

static uint64_t occupied_bins(const tsc_store *st, kept_masks *kept)
{
    uint64_t n = 0;
    kept->n = 0;
    for (int64_t base = st->min_index; base <= st->max_index; base += 64) {
        uint64_t mask = mask_at(st, base);
        if (kept->n < MASKS_KEPT) kept->mask[kept->n++] = mask;
        n += tsc_popcount64(mask);
    }
    return n;
}

/* Bytes of the sparse form's index deltas (the first from 0, then from bin to bin). */
static uint64_t index_delta_bytes(const tsc_store *st, const kept_masks *kept)
{
    uint64_t bytes = 0;
    int64_t prev = 0, i;
    for (occupied_walk w = walk_start(st, kept); walk_next(&w, &i); prev = i) bytes += varint_size(i - prev);
    return bytes;
}

/*
 * Java's choice: contiguous when its size estimate is <= the sparse one (the vectors pin the tie). The
 * two estimates spend the same bytes on counts, so it comes down to the contiguous head plus a byte
 * per empty bin against the index deltas (Java's sparse estimate leaves out its bin count). The deltas
 * after the first are >= 1 and add up to nonempty - 1 + empty, which bounds their bytes from both
 * sides: only a store between the bounds needs its deltas walked.
 */
static int contiguous_wins(const tsc_store *st, uint64_t window, uint64_t nonempty, const kept_masks *kept)
{
    uint64_t empty = window - nonempty, first = varint_size(st->min_index);
    uint64_t contiguous = uvarint_size(window) + first + varint_size(1) + empty;
    uint64_t fewest = first + nonempty - 1, most = fewest + empty / 63 + empty / 8191; /* 2 bytes from 64 */
    if (contiguous <= fewest) return 1;
    if (contiguous > most) return 0;
    return contiguous <= index_delta_bytes(st, kept);
}

/* One store, as sketches-java's dense stores write it: contiguous counts over [min, max] or index deltas
 * and counts over the non-empty bins. */
static void put_store(out_buf *o, const tsc_store *st, uint8_t type, int sparse_only, int writer)
{
    if (st->min_index > st->max_index) return;
    kept_masks kept;
    uint64_t window = (uint64_t)(st->max_index - st->min_index + 1), nonempty = occupied_bins(st, &kept);
    if (!sparse_only && contiguous_wins(st, window, nonempty, &kept)) {
        put_byte(o, (uint8_t)(type | BINS_CONTIGUOUS << 2));
        put_uvarint(o, window);
        put_varint(o, st->min_index);
        put_varint(o, 1);
        put_dense_bins(o, st, writer);
        return;
    }
    put_byte(o, (uint8_t)(type | BINS_INDEX_DELTAS_AND_COUNTS << 2));
    put_uvarint(o, nonempty);
    put_sparse_bins(o, st, &kept, nonempty, writer);
}

size_t tschunk_sketch_encode_bound(const tschunk_sketch *s)
{
    if (!s) return 0;
    size_t bins = 0;
    if (s->pos.min_index <= s->pos.max_index) bins += (size_t)(s->pos.max_index - s->pos.min_index + 1);
    if (s->neg.min_index <= s->neg.max_index) bins += (size_t)(s->neg.max_index - s->neg.min_index + 1);
    /* stats 3+9+9+9, mapping 17, zero 10, two block heads 1+9+9+9, 18 bytes a bin at most */
    return 30 + 17 + 10 + 2 * 28 + bins * 18;
}

size_t tsc_sketch_encode_isa(const tschunk_sketch *s, void *dst, size_t capacity, unsigned flags, int writer)
{
    if (!s || (!dst && capacity)) return TSC_ERROR(BAD_PARAMETER);
    out_buf o = {(uint8_t *)dst, capacity, 0, 0};
    if ((flags & TSCHUNK_SKETCH_EXACT_STATS) && s->exact) {
        /* sketches-java's DDSketchWithExactSummaryStatistics order. */
        if (!tsc_is_zero(s->count)) {
            put_byte(&o, FLAG_COUNT);
            put_varfloat(&o, s->count);
            put_byte(&o, FLAG_MIN);
            put_f64(&o, s->min);
            put_byte(&o, FLAG_MAX);
            put_f64(&o, s->max);
        }
        double sum = tsc_sketch_sum(s);
        if (!tsc_is_zero(sum)) {
            put_byte(&o, FLAG_SUM);
            put_f64(&o, sum);
        }
    }
    if (!(flags & TSCHUNK_SKETCH_OMIT_MAPPING)) {
        put_byte(&o, mapping_flag(s->mapping.kind));
        put_f64(&o, s->mapping.gamma);
        put_f64(&o, s->mapping.index_offset);
    }
    if (!tsc_is_zero(s->zero_count)) {
        put_byte(&o, FLAG_ZERO_COUNT);
        put_varfloat(&o, s->zero_count);
    }
    int sparse = (flags & TSCHUNK_SKETCH_SPARSE) != 0;
    put_store(&o, &s->pos, TYPE_POSITIVE, sparse, writer);
    put_store(&o, &s->neg, TYPE_NEGATIVE, sparse, writer);
    return o.overflow ? TSC_ERROR(DST_TOO_SMALL) : o.pos;
}

size_t tschunk_sketch_encode(const tschunk_sketch *s, void *dst, size_t capacity, unsigned flags)
{
    return tsc_sketch_encode_isa(s, dst, capacity, flags, tsc_sketch_writer_here());
}

/* ---- decoding ----------------------------------------------------------- */
typedef struct {
    const uint8_t *src;
    size_t size, pos;
    size_t err_at;
    int reader; /* TSC_BINS_*: how runs of bins are read */
} in_buf;

static size_t fail_at(in_buf *in, size_t at, size_t err)
{
    in->err_at = at;
    return err;
}

static size_t get_uvarint(in_buf *in, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 9; i++) {
        if (in->pos >= in->size) return fail_at(in, in->pos, TSC_ERROR(TRUNCATED));
        uint64_t b = in->src[in->pos++];
        if (i == 8) {
            v |= b << 56;
            break;
        }
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) break;
    }
    *out = v;
    return 0;
}

TSC_INLINE size_t get_varint(in_buf *in, int64_t *out)
{
    if (TSC_LIKELY(in->pos < in->size && in->src[in->pos] < 0x80)) { /* one byte: small deltas */
        *out = tsc_unzigzag(in->src[in->pos++]);
        return 0;
    }
    uint64_t z;
    size_t err = get_uvarint(in, &z);
    if (!err) *out = tsc_unzigzag(z);
    return err;
}

/* The 7-bit groups of up to 8 varint bytes (first byte in the most significant, continuation bits
 * clear) gathered into x's top 56 bits: varfloat_word's three spreading steps undone. */
TSC_INLINE uint64_t gather_groups(uint64_t w)
{
    w = (w & UINT64_C(0x007f007f007f007f)) | (w & UINT64_C(0x7f007f007f007f00)) >> 1;
    w = (w & UINT64_C(0x00003fff00003fff)) | (w & UINT64_C(0x3fff00003fff0000)) >> 2;
    w = (w & UINT64_C(0x000000000fffffff)) | (w & UINT64_C(0x0fffffff00000000)) >> 4;
    return w << 8;
}

/* Bytes byte by byte, with fewer than 9 left: a count of 9 bytes (its 9th byte's 8 bits) is truncated here. */
static size_t get_varfloat_x_slow(in_buf *in, uint64_t *out)
{
    uint64_t x = 0;
    for (unsigned shift = 57;; shift -= 7) { /* at most 8 bytes: shift stays >= 8 */
        if (in->pos >= in->size) return fail_at(in, in->pos, TSC_ERROR(TRUNCATED));
        uint64_t b = in->src[in->pos++];
        if (b < 0x80) {
            *out = x | b << shift;
            return 0;
        }
        x |= (b & 0x7f) << shift;
    }
}

/* r = rotr6(x) of a count whose bytes are w's top ones (bytes past it zero): the groups gathered by three
 * mask-and-shift steps, or by one pext, whose groups shifted to x's top and rotated are a shift by 2 (x's
 * low 8 bits are zero). */
TSC_INLINE uint64_t count_r(uint64_t w, int pext)
{
#ifdef TSC_HAVE_AVX2
    if (pext) return pext64(w, UINT64_C(0x7f7f7f7f7f7f7f7f)) << 2;
#else
    (void)pext;
#endif
    return rotr6(gather_groups(w & UINT64_C(0x7f7f7f7f7f7f7f7f)));
}

/* A count of up to 8 bytes at w's top (its x's low 8 bits zero, so finite and >= 0: get_count): its r =
 * rotr6(x), and in *bytes its length. Returns 0 for a 9-byte count. A one-byte count keeps its branch:
 * predicted, it lets the next record's loads start before this count is read (one path for every length
 * made chunk summaries slower). */
TSC_INLINE int count_from_word(uint64_t w, int pext, uint64_t *r, size_t *bytes)
{
    if (TSC_LIKELY(!(w >> 63))) { /* one byte: small integers */
        *r = w >> 56 << 51;
        *bytes = 1;
    } else {
        uint64_t ends = ~w & UINT64_C(0x8080808080808080);
        if (!ends) return 0;
        unsigned lead = (unsigned)__builtin_clzll(ends); /* 8 * (bytes - 1) */
        *r = count_r(w & ~UINT64_C(0) << (56 - lead), pext);
        *bytes = lead / 8 + 1;
    }
    return 1;
}

/* The count whose r = rotr6(x) is given: 0 exactly when r is. */
TSC_INLINE double count_of_r(uint64_t r) { return tsc_double_of(r + tsc_bits_of(1.0)) - 1.0; }

/*
 * A count: finite and >= 0, else CORRUPT. With 9 bytes left, one load: the first byte without a
 * continuation bit ends it (bytes past it masked off), and 8 continued bytes mean the 9th byte's 8 bits
 * end it. v + 1 = double(r + bits(1)) with r = rotr6(x) is finite and >= 1, i.e. v finite and >= 0,
 * exactly when r < bits(inf) - bits(1) = 2^62 (a larger r wraps or passes infinity): one compare.
 */
TSC_INLINE size_t get_count(in_buf *in, double *out)
{
    size_t at = in->pos;
    uint64_t x;
    if (TSC_LIKELY(in->pos < in->size && in->src[in->pos] < 0x80)) { /* one byte: small integers */
        *out = count_of_r(rotr6((uint64_t)in->src[in->pos++] << 57));
        return 0;
    }
    if (TSC_LIKELY(in->size - in->pos >= 9)) {
        uint64_t w = tsc_load64_be(in->src + in->pos), r;
        size_t bytes;
        if (TSC_LIKELY(count_from_word(w, 0, &r, &bytes))) {
            *out = count_of_r(r);
            in->pos += bytes;
            return 0;
        }
        x = gather_groups(w & UINT64_C(0x7f7f7f7f7f7f7f7f)) | in->src[in->pos + 8];
        in->pos += 9;
    } else {
        size_t err = get_varfloat_x_slow(in, &x);
        if (err) return err;
    }
    uint64_t r = rotr6(x);
    if (!TSC_LIKELY(r < UINT64_C(0x4000000000000000))) return fail_at(in, at, TSC_ERROR(CORRUPT));
    *out = count_of_r(r);
    return 0;
}

static size_t get_f64(in_buf *in, double *out)
{
    if (in->size - in->pos < 8) return fail_at(in, in->pos, TSC_ERROR(TRUNCATED));
    *out = tsc_double_of(tsc_load64_le(in->src + in->pos));
    in->pos += 8;
    return 0;
}

/* The bins the checking pass read, kept so that committing a stream of up to LOGGED_BINS bins parses nothing
 * again. A bins block is of one sign, so the log is runs of one sign. */
#define LOGGED_BINS TSC_SKETCH_LOGGED_BINS
typedef struct {
    int64_t index[LOGGED_BINS + 8]; /* + 8: the AVX-512 reader writes eight lanes at a time */
    double count[LOGGED_BINS + 8];
    uint8_t negative[LOGGED_BINS + 8];
} bin_log;

/* What a stream says besides its bins, gathered while it is read. */
typedef struct {
    int has_mapping, has_count, has_sum, has_min, has_max;
    tsc_mapping mapping;
    double count, sum, min, max, zero_count;
    double bins_total; /* summed by the committing pass */
    bin_log *log;
    size_t logged; /* bins logged (empty ones only by the AVX-512 reader); LOGGED_BINS + 1: more came, the
                    * commit parses again */
} stream_info;

/*
 * A count's length, for the checking pass, which needs no value: a count of up to 8 bytes leaves x's low
 * 8 bits zero, and then r = rotr6(x) < 2^62 holds (get_count), so it is finite and >= 0 whatever its
 * bytes; a 9-byte count is, exactly when bits 4-5 of its last byte (x's bits 4-5, r's top two) are clear.
 */
TSC_INLINE size_t skip_count(in_buf *in)
{
    if (TSC_LIKELY(in->size - in->pos >= 9)) {
        uint64_t ends = ~tsc_load64_be(in->src + in->pos) & UINT64_C(0x8080808080808080);
        if (TSC_LIKELY(ends)) {
            in->pos += (unsigned)__builtin_clzll(ends) / 8 + 1;
            return 0;
        }
        if (in->src[in->pos + 8] & 0x30) return fail_at(in, in->pos, TSC_ERROR(CORRUPT));
        in->pos += 9;
        return 0;
    }
    double v;
    return get_count(in, &v);
}

/* A one-byte zigzag varint's value: a load where the arithmetic took five instructions. */
const int8_t tsc_unzigzag_byte[128] = {
    0,   -1,  1,   -2,  2,   -3,  3,   -4,  4,   -5,  5,   -6,  6,   -7,  7,   -8,  8,   -9,  9,   -10, 10,  -11,
    11,  -12, 12,  -13, 13,  -14, 14,  -15, 15,  -16, 16,  -17, 17,  -18, 18,  -19, 19,  -20, 20,  -21, 21,  -22,
    22,  -23, 23,  -24, 24,  -25, 25,  -26, 26,  -27, 27,  -28, 28,  -29, 29,  -30, 30,  -31, 31,  -32, 32,  -33,
    33,  -34, 34,  -35, 35,  -36, 36,  -37, 37,  -38, 38,  -39, 39,  -40, 40,  -41, 41,  -42, 42,  -43, 43,  -44,
    44,  -45, 45,  -46, 46,  -47, 47,  -48, 48,  -49, 49,  -50, 50,  -51, 51,  -52, 52,  -53, 53,  -54, 54,  -55,
    55,  -56, 56,  -57, 57,  -58, 58,  -59, 59,  -60, 60,  -61, 61,  -62, 62,  -63, 63,  -64};

/*
 * The bin kernels' loop (sketch.h); without `checked`, every index is known to stay within int32. A record
 * takes at most 9 bytes, so from pos, (avail - pos) / 9 records can be read before the input's end needs a
 * look again (and no more: the records read after an AVX2 block keep to that bound too). With `avx2`,
 * blocks of four records by AVX2 (bins_avx2.c) wherever they fit, the records between them read here.
 */
TSC_INLINE size_t bins_kernel_loop(const uint8_t *src, size_t avail, size_t n, int has_deltas, int checked, int pext,
                                   int avx2, int64_t step, size_t *used, int64_t *index, int64_t *indices,
                                   double *counts, size_t *written)
{
    size_t pos = 0, k = 0, kept = 0, stretch = 4;
    int64_t at = *index;
    while (k < n && pos + 9 <= avail) {
        if (avx2) { /* blocks of four, then a few records here: four after blocks, sixteen when none fit */
            size_t bytes, wrote, got = tsc_bins_blocks_avx2(src + pos, avail - pos, n - k, has_deltas, step, &bytes,
                                                            &at, indices + kept, counts + kept, &wrote);
            pos += bytes, k += got, kept += wrote;
            stretch = got ? 4 : 16;
            if (k == n || pos + 9 > avail) break;
        }
        size_t stop = k + (avail - pos) / 9 < n ? k + (avail - pos) / 9 : n;
        if (avx2 && stop - k > stretch) stop = k + stretch;
        for (; k < stop; k++) {
            int64_t bin = at;
            if (has_deltas) {
                if (src[pos] >= 0x80) goto done;
                bin = at + tsc_unzigzag_byte[src[pos]];
            }
            if (checked && (bin < INT32_MIN || bin > INT32_MAX)) goto done;
            size_t count_at_pos = pos + (has_deltas ? 1 : 0), bytes;
            uint64_t r;
            if (!count_from_word(tsc_load64_be(src + count_at_pos), pext, &r, &bytes)) goto done;
            indices[kept] = bin;
            counts[kept] = count_of_r(r);
            kept += r != 0;
            pos = count_at_pos + bytes;
            at = has_deltas ? bin : bin + step;
        }
    }
done:
    *used = pos;
    *index = at;
    *written = kept;
    return k;
}

#define TAIL_COPIED 64
#define TAIL_PAD 16

/* Each record is read with an 8-byte load: the input's last bytes are read from a copy followed by bytes 0x80,
 * none of which ends a varint, so that no record the input does not hold whole is taken. Where no index of the
 * next n bins can leave int32 (each moving the index by at most 64 or one step; n up to 2^20, a bin log's
 * runs and more, so that n times a step of up to 2^32 stays far inside int64), the loop checks none. */
TSC_INLINE size_t get_bins_kernel(const uint8_t *src, size_t avail, size_t n, int has_deltas, int pext, int avx2,
                                  int64_t step, size_t *used, int64_t *index, int64_t *indices, double *counts,
                                  size_t *written)
{
    uint8_t tail[TAIL_COPIED + TAIL_PAD];
    if (avail < TAIL_COPIED) {
        memcpy(tail, src, avail);
        memset(tail + avail, 0x80, TAIL_PAD);
        src = tail;
        avail += TAIL_PAD;
    }
    int safe = 0;
    if (n <= (size_t)1 << 20) {
        int64_t reach = (int64_t)n * (has_deltas ? 64 : (step < 0 ? -step : step));
        safe = *index >= INT32_MIN + reach && *index <= INT32_MAX - reach;
    }
    /* The AVX2 blocks check no index: they run where none can leave int32. */
    if (has_deltas)
        return safe ? bins_kernel_loop(src, avail, n, 1, 0, pext, avx2, step, used, index, indices, counts, written)
                    : bins_kernel_loop(src, avail, n, 1, 1, pext, 0, step, used, index, indices, counts, written);
    return safe ? bins_kernel_loop(src, avail, n, 0, 0, pext, avx2, step, used, index, indices, counts, written)
                : bins_kernel_loop(src, avail, n, 0, 1, pext, 0, step, used, index, indices, counts, written);
}

size_t tsc_get_bins_scalar(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                           int64_t *index, int64_t *indices, double *counts, size_t *written)
{
    return get_bins_kernel(src, avail, n, has_deltas, 0, 0, step, used, index, indices, counts, written);
}

#ifdef TSC_HAVE_AVX2
/* lzcnt and shlx besides pext: the CPUs with BMI2 have them all. */
__attribute__((target("bmi,bmi2,lzcnt"))) size_t tsc_get_bins_pext(const uint8_t *src, size_t avail, size_t n,
                                                                   int has_deltas, int64_t step, size_t *used,
                                                                   int64_t *index, int64_t *indices, double *counts,
                                                                   size_t *written)
{
    return get_bins_kernel(src, avail, n, has_deltas, 1, 0, step, used, index, indices, counts, written);
}

__attribute__((target("avx2,bmi,bmi2,lzcnt"))) size_t tsc_get_bins_avx2(const uint8_t *src, size_t avail, size_t n,
                                                                        int has_deltas, int64_t step, size_t *used,
                                                                        int64_t *index, int64_t *indices,
                                                                        double *counts, size_t *written)
{
    return get_bins_kernel(src, avail, n, has_deltas, 1, 1, step, used, index, indices, counts, written);
}
#endif

/* The bin kernel the reader names; *written: the bins written to indices and counts (the AVX-512 kernel
 * writes the empty ones too). */
TSC_INLINE size_t get_bins(int reader, const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step,
                           size_t *used, int64_t *index, int64_t *indices, double *counts, size_t *written)
{
    if (reader == TSC_BINS_AVX512) {
        size_t got = tsc_get_bins_avx512(src, avail, n, has_deltas, step, used, index, indices, counts);
        *written = got;
        return got;
    }
    if (reader == TSC_BINS_PEXT_KERNEL)
        return tsc_get_bins_pext(src, avail, n, has_deltas, step, used, index, indices, counts, written);
    if (reader == TSC_BINS_AVX2_KERNEL)
        return tsc_get_bins_avx2(src, avail, n, has_deltas, step, used, index, indices, counts, written);
    return tsc_get_bins_scalar(src, avail, n, has_deltas, step, used, index, indices, counts, written);
}

/* A bin the checking pass read: logged while the log has room (the count in a local: through info it
 * would be a store and a load a bin). */
TSC_INLINE void log_bin(bin_log *log, size_t *logged, int64_t index, double count, int negative)
{
    if (*logged >= LOGGED_BINS) {
        *logged = LOGGED_BINS + 1;
        return;
    }
    if (tsc_is_zero(count)) return;
    log->index[*logged] = index;
    log->count[*logged] = count;
    log->negative[*logged] = (uint8_t)negative;
    ++*logged;
}

/*
 * Up to `left` bins through a bin kernel (TSC_BINS_*, get_bins), logged or added as read_bin_run does;
 * *index is read_bin_run's (the bin before; `first`: none read yet). Returns the bins taken, 0 when the
 * next one is the one-at-a-time reader's.
 */
TSC_INLINE size_t read_bins_kernel(tschunk_sketch *s, tsc_store *st, in_buf *in, int kernel, uint64_t left,
                                   int64_t *index, int first, int64_t step, int negative, stream_info *info,
                                   size_t *logged, int has_deltas, int commit)
{
    int64_t at = has_deltas || first ? *index : *index + step; /* the kernel's: contiguous, the next bin's */
    size_t used, got, written, avail = in->size - in->pos;
    const uint8_t *src = in->src + in->pos;
    if (!commit && *logged < LOGGED_BINS) { /* straight into the log */
        size_t room = LOGGED_BINS - *logged, want = left < room ? (size_t)left : room;
        got = get_bins(kernel, src, avail, want, has_deltas, step, &used, &at, info->log->index + *logged,
                       info->log->count + *logged, &written);
        /* eight signs a store (the log has room past its end): a memset call cost more than a short run */
        uint64_t signs = negative ? UINT64_C(0x0101010101010101) : 0;
        for (size_t i = 0; i < written; i += 8) memcpy(info->log->negative + *logged + i, &signs, 8);
        *logged += written; /* the AVX-512 kernel's empty bins too: the commit skips them */
    } else {
        int64_t indices[64 + 8];
        double counts[64 + 8];
        got = get_bins(kernel, src, avail, (size_t)(left < 64 ? left : 64), has_deltas, step, &used, &at, indices,
                       counts, &written);
        if (commit) {
            if (kernel == TSC_BINS_AVX512) tsc_store_add_many(s, st, indices, counts, written, &info->bins_total, 1);
            else tsc_store_add_many(s, st, indices, counts, written, &info->bins_total, 0);
        } else if (got) {
            *logged = LOGGED_BINS + 1;
        }
    }
    if (got) {
        *index = has_deltas ? at : at - step;
        in->pos += used;
    }
    return got;
}

/*
 * n bins from index (contiguous: step apart; else index deltas). A bin index must stay within int32 as
 * both libraries' stores hold it. The checking pass (commit 0) logs the first LOGGED_BINS non-empty bins
 * and past them reads only lengths and indices, since the committing pass will parse the stream again;
 * the committing pass adds the counts. Runs with counts go through a bin kernel (read_bins_kernel). The
 * form and the pass are constants at every call, so the compiler writes one loop for each.
 */
TSC_INLINE size_t read_bin_run(tschunk_sketch *s, in_buf *in, uint64_t n, int64_t index, int64_t step, int negative,
                               stream_info *info, int has_deltas, int has_counts, int commit)
{
    tsc_store *st = s ? (negative ? &s->neg : &s->pos) : NULL;
    size_t logged = info->logged; /* written back at the end: after an error info is dropped */
    /* Runs of fewer than 32 bins (a chunk summary's) skip the AVX-512 kernel, which measured slower on 10,000
     * summaries of 9-30 bins each (4 KB apart), though faster on any one of them repeated; those of 4 and more
     * take the pext one (tsc_sketch_reader_here). Runs of fewer than 64 skip the AVX2 blocks: on chunk
     * summaries' runs of 32-63 bins, mostly of one-byte counts, the pext kernel's loop is faster. */
    uint64_t simd_from = in->reader == TSC_BINS_AVX512 ? 32 : in->reader == TSC_BINS_AVX2_KERNEL ? 64 : 0;
    int kernel = !has_counts || in->reader == TSC_BINS_ONE_AT_A_TIME || n < 4 ? TSC_BINS_ONE_AT_A_TIME
                 : n >= simd_from                                               ? in->reader
                                                                                : TSC_BINS_PEXT_KERNEL;
    for (uint64_t k = 0; k < n; k++) {
        size_t bin_at = in->pos, err;
        if (kernel != TSC_BINS_ONE_AT_A_TIME) {
            size_t got = read_bins_kernel(s, st, in, kernel, n - k, &index, k == 0, step, negative, info, &logged,
                                          has_deltas, commit);
            if (got) {
                k += got - 1;
                continue;
            }
        }
        if (has_deltas) {
            int64_t d;
            if ((err = get_varint(in, &d))) return err;
            if (d < INT32_MIN * INT64_C(2) || d > INT32_MAX * INT64_C(2)) return fail_at(in, bin_at, TSC_ERROR(CORRUPT));
            index += d;
        } else if (k > 0) {
            index += step;
        }
        if (index < INT32_MIN || index > INT32_MAX) return fail_at(in, bin_at, TSC_ERROR(CORRUPT));
        if (!commit && logged >= LOGGED_BINS) {
            if (has_counts && (err = skip_count(in))) return err;
            logged = LOGGED_BINS + 1;
            continue;
        }
        double count = 1;
        if (has_counts && (err = get_count(in, &count))) return err;
        if (!commit) {
            log_bin(info->log, &logged, index, count, negative);
        } else if (!tsc_is_zero(count)) {
            info->bins_total += count;
            tsc_store_add(s, st, index, count);
        }
    }
    info->logged = logged;
    return 0;
}

static size_t read_bins(tschunk_sketch *s, in_buf *in, unsigned subflag, int negative, stream_info *info,
                        int commit)
{
    size_t at = in->pos, err;
    uint64_t n;
    if ((err = get_uvarint(in, &n))) return err;
    /* Every bin takes at least one byte: a count beyond the input is a lie. */
    if (n > in->size - in->pos) return fail_at(in, in->size, TSC_ERROR(TRUNCATED));
    int64_t index = 0, step = 1;
    if (subflag == BINS_CONTIGUOUS) {
        if ((err = get_varint(in, &index)) || (err = get_varint(in, &step))) return err;
        if (index < INT32_MIN || index > INT32_MAX || step < INT32_MIN || step > INT32_MAX)
            return fail_at(in, at, TSC_ERROR(CORRUPT));
        return commit ? read_bin_run(s, in, n, index, step, negative, info, 0, 1, 1)
                      : read_bin_run(s, in, n, index, step, negative, info, 0, 1, 0);
    }
    if (subflag == BINS_INDEX_DELTAS)
        return commit ? read_bin_run(s, in, n, 0, 1, negative, info, 1, 0, 1)
                      : read_bin_run(s, in, n, 0, 1, negative, info, 1, 0, 0);
    return commit ? read_bin_run(s, in, n, 0, 1, negative, info, 1, 1, 1)
                  : read_bin_run(s, in, n, 0, 1, negative, info, 1, 1, 0);
}

static size_t read_feature(in_buf *in, uint8_t flag, stream_info *info)
{
    size_t at = in->pos - 1, err = 0;
    double v;
    switch (flag) {
    case FLAG_ZERO_COUNT:
        if ((err = get_count(in, &v))) return err;
        info->zero_count += v;
        return info->zero_count <= DBL_MAX ? 0 : fail_at(in, at, TSC_ERROR(CORRUPT)); /* repeated, to infinity */
    case FLAG_COUNT:
        if ((err = get_count(in, &v))) return err;
        info->count += v;
        info->has_count = 1;
        return info->count <= DBL_MAX ? 0 : fail_at(in, at, TSC_ERROR(CORRUPT));
    case FLAG_SUM:
        /* Any value: a sum of finite values overflows to +-inf (or NaN once both signs have), and
         * both reference libraries write and read that. */
        if ((err = get_f64(in, &v))) return err;
        info->sum += v;
        info->has_sum = 1;
        return 0;
    case FLAG_MIN:
    case FLAG_MAX:
        if ((err = get_f64(in, &v))) return err;
        if (isnan(v)) return fail_at(in, at, TSC_ERROR(CORRUPT));
        if (flag == FLAG_MIN) info->min = info->has_min ? fmin(info->min, v) : v, info->has_min = 1;
        else info->max = info->has_max ? fmax(info->max, v) : v, info->has_max = 1;
        return 0;
    default: return fail_at(in, at, TSC_ERROR(CORRUPT));
    }
}

static size_t read_mapping(tschunk_sketch *s, in_buf *in, uint8_t flag, stream_info *info)
{
    size_t at = in->pos - 1, err;
    unsigned layout = flag >> 2;
    double gamma, offset;
    if (layout > TSCHUNK_MAPPING_QUARTIC) return fail_at(in, at, TSC_ERROR(CORRUPT));
    if ((err = get_f64(in, &gamma)) || (err = get_f64(in, &offset))) return err;
    /* The usual case, the sketch's own mapping: compare bits, skip rebuilding it (log1p, pow). */
    if (s && layout == (unsigned)s->mapping.kind && tsc_bits_of(gamma) == tsc_bits_of(s->mapping.gamma) &&
        tsc_bits_of(offset) == tsc_bits_of(s->mapping.index_offset)) {
        info->mapping = s->mapping;
        info->has_mapping = 1;
        return 0;
    }
    tsc_mapping m;
    if (tsc_mapping_from_gamma(&m, (tschunk_mapping_kind)layout, gamma, offset))
        return fail_at(in, at, TSC_ERROR(CORRUPT));
    if (s && !tsc_mapping_equal(&m, &s->mapping)) return fail_at(in, at, TSC_ERROR(NOT_MERGEABLE));
    if (info->has_mapping && !tsc_mapping_equal(&m, &info->mapping)) return fail_at(in, at, TSC_ERROR(CORRUPT));
    info->mapping = m;
    info->has_mapping = 1;
    return 0;
}

/* One pass over the blocks; with commit, bins go into s. */
static size_t read_stream(tschunk_sketch *s, in_buf *in, stream_info *info, int commit, bin_log *log)
{
    memset(info, 0, sizeof *info);
    info->log = log;
    info->logged = log ? 0 : LOGGED_BINS + 1;
    in->pos = 0;
    while (in->pos < in->size) {
        size_t at = in->pos, err;
        uint8_t flag = in->src[in->pos++];
        unsigned type = flag & 3, subflag = flag >> 2;
        switch (type) {
        case TYPE_FEATURE: err = read_feature(in, flag, info); break;
        case TYPE_MAPPING: err = read_mapping(s, in, flag, info); break;
        default:
            if (subflag < BINS_INDEX_DELTAS_AND_COUNTS || subflag > BINS_CONTIGUOUS)
                return fail_at(in, at, TSC_ERROR(CORRUPT));
            err = read_bins(s, in, subflag, type == TYPE_NEGATIVE, info, commit);
            break;
        }
        if (err) return err;
    }
    return 0;
}

/* Statistics of the merged stream: exact when it carried COUNT, else from its bins. */
static void merge_stats(tschunk_sketch *s, const stream_info *info)
{
    s->zero_count += info->zero_count;
    if (info->has_count) {
        tsc_kahan_add(&s->sum, &s->sum_compensation, info->has_sum ? info->sum : 0);
        s->simple_sum += info->has_sum ? info->sum : 0;
        s->count += info->count;
        if (info->has_min && info->min < s->min) s->min = info->min;
        if (info->has_max && info->max > s->max) s->max = info->max;
        return;
    }
    /* Without COUNT the statistics are derived from the bins, when asked (tschunk_sketch_get_stats). */
    double added = info->bins_total + info->zero_count;
    if (added > 0) tsc_sketch_set_exact(s, 0);
    s->count = tsc_count_add(s->count, added); /* bins summed past DBL_MAX saturate, and so does their count */
}

/* Put a checked stream's bins and statistics into s: from the log when it holds every bin, else by a
 * second pass, which cannot fail. */
static void commit_stream(tschunk_sketch *s, in_buf *in, stream_info *info, const bin_log *log)
{
    if (info->logged <= LOGGED_BINS) {
        for (size_t i = 0, end; i < info->logged; i = end) { /* a run of one sign: up to the other sign */
            const uint8_t *other = memchr(log->negative + i, !log->negative[i], info->logged - i);
            end = other ? (size_t)(other - log->negative) : info->logged;
            tsc_store *st = log->negative[i] ? &s->neg : &s->pos;
            const int64_t *index = log->index + i;
            const double *count = log->count + i;
            /* its kernel logs empty bins too; a stream with COUNT needs no sum of its bins (merge_stats) */
            int empty_ones = in->reader == TSC_BINS_AVX512;
            if (info->has_count && empty_ones) tsc_store_add_many(s, st, index, count, end - i, NULL, 1);
            else if (info->has_count) tsc_store_add_many(s, st, index, count, end - i, NULL, 0);
            else if (empty_ones) tsc_store_add_many(s, st, index, count, end - i, &info->bins_total, 1);
            else tsc_store_add_many(s, st, index, count, end - i, &info->bins_total, 0);
        }
    } else {
        stream_info again;
        read_stream(s, in, &again, 1, NULL);
        info->bins_total = again.bins_total;
    }
    merge_stats(s, info);
}

size_t tschunk_sketch_decode_merge(tschunk_sketch *s, const void *src, size_t size, size_t *error_offset)
{
    return tsc_sketch_decode_merge_isa(s, src, size, error_offset, tsc_sketch_reader_here());
}

size_t tsc_sketch_decode_merge_isa(tschunk_sketch *s, const void *src, size_t size, size_t *error_offset, int reader)
{
    if (!s || (!src && size)) return TSC_ERROR(BAD_PARAMETER);
    in_buf in = {(const uint8_t *)src, size, 0, 0, reader};
    stream_info info;
    bin_log log;
    size_t err = read_stream(s, &in, &info, 0, &log); /* check everything first: nothing changes on error */
    /* Counts that would add up past DBL_MAX in the sketch: as tschunk_sketch_merge. */
    if (!err && !(s->zero_count + info.zero_count <= DBL_MAX && (!info.has_count || s->count + info.count <= DBL_MAX)))
        err = fail_at(&in, 0, TSC_ERROR(UNTRACKABLE));
    if (err) {
        if (error_offset) *error_offset = in.err_at;
        return err;
    }
    commit_stream(s, &in, &info, &log);
    return 0;
}

size_t tschunk_sketch_decode_new(tschunk_sketch **out, const void *src, size_t size,
                                 const tschunk_sketch_options *opts, size_t *error_offset)
{
    if (!out || (!src && size)) return TSC_ERROR(BAD_PARAMETER);
    *out = NULL;
    in_buf in = {(const uint8_t *)src, size, 0, 0, tsc_sketch_reader_here()};
    stream_info info;
    bin_log log;
    size_t err = read_stream(NULL, &in, &info, 0, &log);
    if (!err && !info.has_mapping) err = fail_at(&in, 0, TSC_ERROR(CORRUPT)); /* the mapping is missing */
    if (err) {
        if (error_offset) *error_offset = in.err_at;
        return err;
    }
    err = tsc_sketch_create_with(out, &info.mapping, opts); /* the mapping the checking pass built */
    if (err) return err;
    commit_stream(*out, &in, &info, &log); /* checked above, against the mapping the new sketch now has */
    return 0;
}
