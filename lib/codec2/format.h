/*
 * Codec 2 ("tsc2"): a chunk is the v1 chunk header (README "Chunk format v1":
 * magic and version byte, flags and codec id 2, uvarint count), then
 *   TS_CONST (count >= 2 only): zigzag uvarint ts[0], uvarint delta; every
 *            ts[i] = ts[0] + i * delta, and groups have no timestamp block
 *   VAL_CONST (count >= 2 only): 8 bytes, every value's bits; groups have no
 *            value block. With VAL_SHORT (0.13.0): instead, the uvarint of
 *            those bits reversed (bit 63 first), under 8 bytes long
 *   TS_SCALED (0.13.0; count >= 2, not with TS_CONST): no field here; every
 *            timestamp block of n >= 2 holds a uvarint scale (>= 1) after its
 *            form byte, and its fields are stored divided by it
 * then ceil(count / 128) groups; every group holds 128 samples but the last,
 * which holds the rest. README "Codec 2" specifies the bytes; this header
 * names the numbers and declares the group coder.
 *
 * A group is its timestamp block, then its value block:
 *
 *   timestamps  uvarint zigzag(lead - expected), where lead = ts[0] - the previous
 *               group's last ts (0 for the first group) and expected is 0
 *               when n = 1, else min_delta (DELTA) or step (GRID), read next
 *               n >= 2, DELTA form: u8 form, [uvarint scale], uvarint min_delta,
 *                       n - 1 fields: (ts[i] - ts[i-1] - min_delta) / scale
 *               n >= 2, GRID form: u8 0x80 | form, [uvarint scale], uvarint step,
 *                       uvarint zigzag(min_offset), n - 1 fields:
 *                       (ts[i] - ts[0] - i * step - min_offset) / scale   (i = 1..n-1)
 *               (scale: TS_SCALED chunks only; elsewhere 1)
 *               form (low 7 bits) 0..64: the fields packed at that width;
 *               65..127: PATCHED at width form - 65 (0..62): the fields' low
 *               bits packed, then uvarint patch count (>= 1) and per patch
 *               u8 field index (increasing) and uvarint high bits
 *               (field = low | high << width), so a gap in a regular
 *               series costs one patch, not a wider field for every sample
 *               (all timestamp arithmetic wraps modulo 2^64: min_delta is a
 *               base, not necessarily the smallest step; since 0.29.0 the
 *               encoder may write a step x below it as the field
 *               2^64 - (min_delta - x), patched, at scale 1: the sum wraps;
 *               GRID's min_offset likewise)
 *   values      u8 mode, then by mode & 3:
 *                 0        mode 0x00 RAW: n x 8 bytes, the value bits, little-endian
 *                          mode 0x04 CONST: 8 bytes, every value these bits
 *                          mode 0x0C CONST REPEAT: no bytes, every value repeats
 *                          the previous group's last
 *                          mode 0x10 SPLIT (ALP-RD's idea, for real doubles):
 *                          u8 L (1..16) left bits, u8 D (1..8) dictionary
 *                          size, D uvarint left values (< 2^L), n packed codes
 *                          of width(D - 1) bits, n packed right parts of
 *                          64 - L bits, uvarint exception count, then per
 *                          exception u8 position (increasing, below n) and
 *                          uvarint left value; value i = left << (64 - L) | right,
 *                          left = dictionary[code] (an exception's code is 0
 *                          and its left is its own)
 *                          (other modes of kind 0: reserved)
 *                 DECIMAL  mode bit 2 DELTA, bit 3 FLOAT32, bits 4-7 exponent e:
 *                          value = (double)k / 10^e, IEEE division (then float32 when FLOAT32)
 *                          uvarint zigzag(base), DELTA: uvarint zigzag(min_step),
 *                          u8 form, packed fields: k[i] - base (n of them), or
 *                          DELTA: k[0] = base, k[i] - k[i-1] - min_step (n - 1),
 *                          all modulo 2^64 (since 0.29.0 the encoder writes a
 *                          step below min_step, a counter's reset, as a field
 *                          that wraps, patched);
 *                          form 0..64: the width; 65..127 (0.20.0): PATCHED at
 *                          width w = form - 65, the packed fields' low bits, then
 *                          u8 patch count p (1..fields), u8 high width h (1..64 - w),
 *                          p u8 field indexes (increasing, below the fields), p
 *                          high parts packed at h bits (field = low | high << w);
 *                          128..255: CORRUPT; then
 *                          uvarint exception count, then per exception
 *                          u8 position (increasing, below n) with bit 7 RAW:
 *                          RAW: 8 bytes of value bits; else uvarint
 *                          zigzag(bits - bits decoded from k), a correction
 *                          in units in the last place
 *                 MASKED   as DECIMAL, after ceil(n / 8) bytes of repeat mask
 *                          (bit i of the LSB-first string set: value i repeats
 *                          value i - 1, the previous group's last for i = 0;
 *                          the bits past n are zero), the decimal fields cover
 *                          only the m values not masked (m >= 1), in order
 *                 XOR      uvarint byte length, then codec 1's XOR fields
 *                          (lib/codec/xor.h) for the n values, the first XORed
 *                          with the previous group's last value (0 for the first
 *                          group), no window open at the start
 *
 * Packed fields are LSB-first: field i is bits [i*width, (i+1)*width) of the
 * little-endian bit string that starts at the first byte; the last byte's
 * unused high bits are zero.
 */
#ifndef TSCHUNK_CODEC2_FORMAT_H
#define TSCHUNK_CODEC2_FORMAT_H

#include "../common/common.h"

#define TSC2_GROUP TSCHUNK_GROUP_SAMPLES
#define TSC2_KNOWN_GROUPS 8u /* tschunk_codec2_state.group_bytes */
#define TSC2_MAX_EXPONENT 15u

enum { TSC2_PLAIN = 0, TSC2_MASKED = 1, TSC2_DECIMAL = 2, TSC2_XOR = 3 }; /* mode & 3 */
#define TSC2_RAW 0x00u
#define TSC2_CONST 0x04u
#define TSC2_CONST_REPEAT 0x08u
#define TSC2_SPLIT 0x10u
#define TSC2_SPLIT_DICT 8u
#define TSC2_SPLIT_MAX_LEFT 16u
#define TSC2_TS_GRID 0x80u
#define TSC2_TS_PATCHED 65u   /* form codes from here: patched widths 0..62 */
#define TSC2_DECIMAL_DELTA 0x04u
#define TSC2_DECIMAL_FLOAT32 0x08u
#define TSC2_EXCEPTION_RAW 0x80u

/*
 * The encoder's plain loops (field differences, offsets, fills) compiled three
 * times, for x86-64-v4 (AVX-512: 64-bit min/max and masks, which took 10% off
 * a one-at-a-time append of a gauge), AVX2 and the baseline, the loader
 * picking one (an ifunc, glibc on x86-64); elsewhere once. Same C source: the
 * compiler vectorizes it. Not under ThreadSanitizer: the loader runs an
 * ifunc's resolver before TSan's runtime is set up, and TSan's instrumented
 * resolver crashed every program built with it (the baseline loop is used).
 */
#if defined(__SANITIZE_THREAD__)
#  define TSC2_UNDER_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define TSC2_UNDER_TSAN 1
#  endif
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && (!defined(__clang__) || __clang_major__ >= 14) && \
    !defined(TSC2_UNDER_TSAN)
#  define TSC2_AVX2_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#  define TSC2_AVX2_CLONES
#endif

/* Largest group of n samples: 64-bit DELTA fields (GRID is written only when smaller, a scale only when it saves
 * more than its uvarint's bytes past the first) and RAW values. */
TSC_INLINE size_t tsc_codec2_group_bound(size_t n)
{
    return 10 + 1 + 8 * n + (n >= 2 ? 12 + 8 * (n - 1) : 0);
}

/* The flags codec 2 adds to codec 1's (byte 1's whole high nibble is then in use). */
#define TSC2_FLAGS_KNOWN (TSCHUNK_FLAG_VAL_SHORT | TSCHUNK_FLAG_TS_SCALED)

/* Bit i to bit 63 - i: a value's sign, exponent and high mantissa bits become the low bits of a small number. */
TSC_INLINE uint64_t tsc_codec2_reverse64(uint64_t x)
{
    x = (x >> 1 & UINT64_C(0x5555555555555555)) | (x & UINT64_C(0x5555555555555555)) << 1;
    x = (x >> 2 & UINT64_C(0x3333333333333333)) | (x & UINT64_C(0x3333333333333333)) << 2;
    x = (x >> 4 & UINT64_C(0x0f0f0f0f0f0f0f0f)) | (x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4;
    return __builtin_bswap64(x);
}

TSC_INLINE size_t tsc_codec2_packed_bytes(size_t fields, unsigned width) { return (fields * width + 7) / 8; }

TSC_INLINE unsigned tsc_codec2_width(uint64_t range) { return range ? 64u - (unsigned)__builtin_clzll(range) : 0u; }

static const double tsc_codec2_pow10[TSC2_MAX_EXPONENT + 1] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                                1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
/* Adding TSC2_MAGIC rounds |x| < 2^51 to an integer in the low mantissa; its bits, for k carried biased by them. */
#define TSC2_MAGIC 0x1.8p52
#define TSC2_MAGIC_BITS INT64_C(0x4338000000000000)
/* 10^-e rounded to nearest (a decimal literal is correctly rounded): the SIMD kernels' division-free k / 10^e. */
static const double tsc_codec2_pow10_inverse[TSC2_MAX_EXPONENT + 1] = {
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15};

/* The decimal reading of a value: k / 10^exponent, rounded to float32 when as_float. */
typedef struct {
    unsigned exponent;
    int as_float;
    int usable;
} tsc_codec2_decimal;

/* The value k / 10^e decodes to (the decoder's formula, also used to verify the encoder's choice). */
TSC_INLINE uint64_t tsc_codec2_decimal_bits(int64_t k, unsigned e, int as_float)
{
    double v = (double)k / tsc_codec2_pow10[e];
    return tsc_bits_of(as_float ? (double)(float)v : v);
}

/*
 * How a value reads as a decimal: EXACT (k / 10^e gives its bits), NEAR (k
 * gives bits within TSC2_NEAR_ULPS of them: an exception stored as the
 * difference, as noisy text such as 6.4560000000000004 needs), or FAR.
 */
enum { TSC2_EXACT = 0, TSC2_NEAR = 1, TSC2_FAR = 2 };
#define TSC2_NEAR_ULPS (INT64_C(1) << 13) /* corrections of at most 2 bytes */

TSC_INLINE int tsc_codec2_read(uint64_t bits, unsigned e, int as_float, int64_t *k, int64_t *diff)
{
    double x = tsc_double_of(bits) * tsc_codec2_pow10[e];
    *k = *diff = 0;
    if (!(x > -0x1p51 && x < 0x1p51)) return TSC2_FAR; /* NaN too */
    double rounded = (x + 0x1.8p52) - 0x1.8p52;         /* to nearest, ties to even */
    *k = (int64_t)rounded;
    *diff = (int64_t)(bits - tsc_codec2_decimal_bits(*k, e, as_float));
    if (*diff == 0) return TSC2_EXACT;
    return *diff > -TSC2_NEAR_ULPS && *diff < TSC2_NEAR_ULPS ? TSC2_NEAR : TSC2_FAR;
}

/* k with k / 10^e == value exactly (bit for bit), if there is one. */
TSC_INLINE int tsc_codec2_decimal_of(uint64_t bits, unsigned e, int as_float, int64_t *k)
{
    int64_t diff;
    return tsc_codec2_read(bits, e, as_float, k, &diff) == TSC2_EXACT;
}

/* Bytes of one decimal exception entry: a position byte, then a correction or the raw bits. A NEAR
 * correction's zigzag is under 2^14 (|diff| < TSC2_NEAR_ULPS): one uvarint byte under 128, else two; no
 * loop, so that the exceptions kernels' scalar twin has no branch on it. */
TSC_INLINE size_t tsc_codec2_exception_bytes(int reading, int64_t diff)
{
    return reading == TSC2_NEAR ? 2u + (tsc_zigzag(diff) >= 0x80) : 9u;
}

/* What a chunk's header says beyond its count: flags and the constants they carry. */
typedef struct {
    unsigned flags;   /* TSCHUNK_FLAG_TS_CONST, TSCHUNK_FLAG_VAL_CONST */
    int64_t first_ts; /* TS_CONST */
    uint64_t delta;   /* TS_CONST */
    uint64_t value;   /* VAL_CONST */
} tsc_codec2_frame;

/* A PATCHED decimal block's patches, checked: field indexes increasing and below the fields, and the values to
 * add to them (the high bits in place). */
typedef struct {
    const uint8_t *at;
    uint64_t add[TSC2_GROUP];
    size_t count;
} tsc_codec2_patches;

/* A group's fields, as parsed from its bytes (every length checked against the chunk). */
typedef struct {
    uint64_t ts_offset;       /* zigzag-decoded: lead - expected (see above), wrapping */
    uint64_t min_delta;       /* DELTA: the fields' base (the smallest delta, or one a wrapped field goes below);
                                 GRID: the zigzag-decoded min_offset */
    uint64_t grid_step;       /* GRID only */
    int ts_grid;
    const uint8_t *ts_packed;
    unsigned ts_width;
    uint64_t ts_scale;        /* TS_SCALED: what the fields are multiplied by (>= 1); else 1 */
    size_t ts_patches;        /* PATCHED: how many */
    const uint8_t *ts_patch_at;
    unsigned mode;
    const uint8_t *payload;   /* RAW / CONST bytes, packed decimals, XOR stream */
    size_t payload_bytes;     /* XOR stream bytes */
    uint64_t dec_base;        /* zigzag-decoded */
    uint64_t dec_min_step;
    unsigned dec_width;
    size_t dec_patches;       /* PATCHED decimal fields (0.20.0): how many */
    const uint8_t *dec_patch_at;  /* their field indexes */
    const uint8_t *dec_highs;     /* their high bits, packed at dec_high_width */
    unsigned dec_high_width;
    size_t exceptions;
    const uint8_t *exception_at;
    const uint8_t *mask;      /* MASKED: the repeat mask */
    unsigned left_bits;       /* SPLIT */
    unsigned dict_size;
    const uint8_t *codes;
    const uint8_t *rights;
    size_t kept;              /* DECIMAL: n; MASKED: the values not masked */
    size_t ts_bytes;          /* the timestamp block */
    size_t size;              /* the whole group */
    uint64_t dict[TSC2_SPLIT_DICT]; /* SPLIT only (last: the parse clears the fields above it) */
} tsc_codec2_group;

/* pack.c: bit packing. */
void tsc_codec2_pack(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width);
void tsc_codec2_pack_scalar(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width);
/* The AVX-512 packing of widths 1..57 where the CPU has it and isa (TSC_SIMD_*) allows, else AVX2's of widths
 * 1..16 (@return 1), else nothing (0). */
int tsc_codec2_pack_simd(unsigned isa, uint8_t *dst, const uint64_t *fields, size_t n, unsigned width);
void tsc_codec2_pack_narrow_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width); /* 1..16 */
void tsc_codec2_pack_wide_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width);   /* 17..32 */
void tsc_codec2_pack_long_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width);   /* 33..57 */
void tsc_codec2_unpack(const uint8_t *restrict src, size_t avail, uint64_t *restrict fields, size_t n, unsigned width);

/*
 * simd.c: each kernel, its scalar twin, and its SIMD version (returns 0 when
 * this CPU has none, for the tests that compare the two).
 *   range_i64        min and max of v[0..n)
 *   deltas           ts[i] - ts[i-1] (ts[-1] = prev) as uint64, and their unsigned min and max (n >= 1)
 *   read_block       k[i] and diff[i] as tsc_codec2_read gives them, diff INT64_MIN when out of range
 *   decimals_to_bits      bits[i] = tsc_codec2_decimal_bits(base + fields[i]); its SIMD version (every
 *                         |k| < 2^51) is the tests' handle on the division-free conversion the fused
 *                         kernels below use
 *   decimal_sums_to_bits  bits[i] = tsc_codec2_decimal_bits(k[i]), k[i] = k[i-1] + step + fields[i], k[-1] = start
 *                         (scalar only: the fallback of unpack_decimal_sums)
 *   (arithmetic mod 2^64)
 */
void tsc_codec2_range_i64(const int64_t *v, size_t n, int64_t *min, int64_t *max);
void tsc_codec2_range_i64_scalar(const int64_t *v, size_t n, int64_t *min, int64_t *max);
int tsc_codec2_range_i64_simd(unsigned isa, const int64_t *v, size_t n, int64_t *min, int64_t *max);
void tsc_codec2_deltas(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min, uint64_t *max);
void tsc_codec2_deltas_scalar(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                              uint64_t *max);
int tsc_codec2_deltas_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                           uint64_t *max);
void tsc_codec2_read_block(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k, int64_t *diff);
void tsc_codec2_read_block_scalar(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                                  int64_t *diff);
int tsc_codec2_read_block_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                               int64_t *diff);
void tsc_codec2_decimals_to_bits_scalar(uint64_t base, const uint64_t *fields, size_t n, unsigned e, int as_float,
                                        uint64_t *bits);
int tsc_codec2_decimals_to_bits_simd(uint64_t base, const uint64_t *fields, size_t n, unsigned e, int as_float,
                                     uint64_t *bits);
void tsc_codec2_decimal_sums_to_bits_scalar(uint64_t start, uint64_t step, const uint64_t *fields, size_t n,
                                            unsigned e, int as_float, uint64_t *bits);
/*
 * running_sum: out[i] = out[i-1] + add + in[i], out[-1] = start (mod 2^64);
 * grid: out[i] = start + (i + 1) * add + in[i] (mod 2^64), out[-1] = prev0.
 * Both return whether some out[i] < out[i-1] as int64 (time going
 * backwards). in and out may be the same array.
 */
int tsc_codec2_running_sum(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out);
int tsc_codec2_running_sum_scalar(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out);
int tsc_codec2_running_sum_simd(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out, int *back);
int tsc_codec2_grid(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out);
int tsc_codec2_grid_scalar(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out);
int tsc_codec2_grid_simd(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out,
                         int *back);
/*
 * unpack_decimal_sums: decimal_sums_to_bits of the n (<= TSC2_GROUP) fields tsc_codec2_unpack gives from
 * src[0, avail); the SIMD version (widths 1..30 only: it returns 0 otherwise) needs every |k| < 2^51
 */
/* PATCHED fields: patches->add[j] added to field patches->at[j] first (start: base for FOR, k[-1] for DELTA; add:
 * DELTA's step). The SIMD forms need every k below 2^51 in magnitude, as the others do. */
int tsc_codec2_unpack_patched_decimals_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                            int delta, uint64_t start, uint64_t add, unsigned e, int as_float,
                                            const tsc_codec2_patches *patches, uint64_t *bits);
/* The k of PATCHED fields in passes (unpacked, patches added, summed for DELTA): the twin's and the fallback's. */
void tsc_codec2_patched_ks(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta, uint64_t start,
                           uint64_t add, const tsc_codec2_patches *patches, uint64_t *ks);
void tsc_codec2_unpack_patched_decimals_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                                               uint64_t start, uint64_t add, unsigned e, int as_float,
                                               const tsc_codec2_patches *patches, uint64_t *bits);
int tsc_codec2_unpack_decimal_sums_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                        uint64_t start, uint64_t step, unsigned e, int as_float, uint64_t *bits);
void tsc_codec2_unpack_decimal_sums_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, uint64_t start,
                                           uint64_t step, unsigned e, int as_float, uint64_t *bits);
/* unpack_decimals: decimals_to_bits of the n (<= TSC2_GROUP) fields tsc_codec2_unpack gives, the same way */
int tsc_codec2_unpack_decimals_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                    uint64_t base, unsigned e, int as_float, uint64_t *bits);
void tsc_codec2_unpack_decimals_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, uint64_t base,
                                       unsigned e, int as_float, uint64_t *bits);
/*
 * unpack_timestamps: the n (<= TSC2_GROUP) fields tsc_codec2_unpack gives from src[0, avail) through
 * tsc_codec2_grid (grid != 0: prev0, start, add) or tsc_codec2_running_sum (start, add; prev0 unused), with
 * their result; the SIMD version (widths 1..30 only: it returns 0 otherwise) gives it in *back
 */
int tsc_codec2_unpack_timestamps_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                      int grid, uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out, int *back);
int tsc_codec2_unpack_timestamps_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, int grid,
                                        uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out);
/*
 * simd512.c (x86-64 only; call where tsc_avx512_here()): the same fused kernels with AVX-512 (F, BW, VBMI),
 * eight lanes a step. The unpack_* dispatchers above take an isa: TSC_SIMD_BEST (AVX-512, else AVX2), or
 * one of the two alone, which the tests compare in turn with the scalar twins. Widths 1..30, n <= TSC2_GROUP.
 *   timestamps_avx512  unpack_timestamps' grid or running sum, returning whether time went back (0 when
 *                      check is 0: the lanes are not compared)
 *   decimals_avx512    unpack_decimal_sums (delta: start, add = step) or unpack_decimals (start = add = base)
 */
enum { TSC_SIMD_BEST, TSC_SIMD_AVX2, TSC_SIMD_AVX512 };
int tsc_codec2_timestamps_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int grid, int check,
                                 uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out);
void tsc_codec2_patched_decimals_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                                        uint64_t start, uint64_t add, unsigned e, int as_float,
                                        const tsc_codec2_patches *patches, uint64_t *bits);
void tsc_codec2_decimals_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta, uint64_t start,
                                uint64_t add, unsigned e, int as_float, uint64_t *bits);
void tsc_codec2_deinterleave_avx512(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits);
void tsc_codec2_expand_masked_avx512(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n,
                                     uint64_t *bits);
size_t tsc_codec2_unpack_long_avx512(const uint8_t *src, uint64_t *fields, size_t n, unsigned width);
uint64_t tsc_codec2_odd_deltas_avx512(const int64_t *ts, size_t n, int64_t prev, size_t from, uint64_t first_delta);
uint64_t tsc_codec2_odd_values_avx512(const uint64_t *bits, size_t n, uint64_t first_bits);
/* The encoder's planning kernels (range_i64, deltas, repeats, read_block) eight lanes at a time, any n; their
 * *_simd dispatchers above take the isa as the unpack_* ones do. */
void tsc_codec2_range_i64_avx512(const int64_t *v, size_t n, int64_t *min, int64_t *max);
void tsc_codec2_deltas_avx512(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                              uint64_t *max);
size_t tsc_codec2_repeats_avx512(const uint64_t *bits, size_t n, uint64_t prev);
size_t tsc_codec2_repeat_mask_avx512(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask, uint64_t *kept);
void tsc_codec2_left_part_counts_avx512(const uint64_t *bits, size_t n, unsigned right_bits,
                                        const uint64_t *candidates, size_t *counts, uint64_t *outside);
size_t tsc_codec2_exceptions_avx512(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at, size_t *bytes,
                                    size_t *first_ok);
size_t tsc_codec2_split_patches_avx512(uint64_t *fields, size_t m, unsigned width, uint8_t *at,
                                       uint64_t *high);
void tsc_codec2_read_block_avx512(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                                  int64_t *diff);
/* deinterleave: n <= TSC2_GROUP raw samples (16 bytes each: time, value, little-endian, as the open group
 * keeps them) into ts and bits; the SIMD version only with AVX-512 (it returns 0 otherwise) */
void tsc_codec2_deinterleave(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits);
void tsc_codec2_deinterleave_scalar(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits);
int tsc_codec2_deinterleave_simd(unsigned isa, const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits);
/* expand_masked: a MASKED group's n values from its mask (bit i set: value i repeats the one before it) and its
 * kept values, kept[-1] being what a repeat before the first kept value repeats (kept[-1 .. kept_count - 1]
 * readable). mask_sources[m][k]: where value k of a mask byte m comes from, relative to the byte's first kept
 * value not yet used (-1: the one before it); [m][7] + 1 is the kept values the byte uses. */
extern const int8_t tsc_codec2_mask_sources[256][8];
/* expand_masked's values from i on, one at a time (j: the kept values used before value i; from = kept - 1),
 * the kernels' and the twin's last byte: its bits past n are zero, not repeats, so no table. */
TSC_INLINE void tsc_codec2_expand_masked_tail(const uint8_t *mask, const uint64_t *from, size_t i, size_t j, size_t n,
                                              uint64_t *bits)
{
    for (; i < n; i++) {
        j += ((mask[i >> 3] >> (i & 7)) & 1) ^ 1;
        bits[i] = from[j];
    }
}
void tsc_codec2_expand_masked(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n, uint64_t *bits);
void tsc_codec2_expand_masked_scalar(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n,
                                     uint64_t *restrict bits);
int tsc_codec2_expand_masked_simd(unsigned isa, const uint8_t *mask, const uint64_t *kept, size_t kept_count,
                                  size_t n, uint64_t *bits);
/* odd_deltas: the OR over i in [from, n) of (ts[i] - ts[i-1]) ^ first_delta (ts[-1] = prev), zero when every
 * step is the chunk's first; odd_values: the OR over all i of bits[i] ^ first_bits (TS_CONST and VAL_CONST's
 * checks). The SIMD versions only with AVX-512 (they return 0 otherwise). */
uint64_t tsc_codec2_odd_deltas(const int64_t *ts, size_t n, int64_t prev, size_t from, uint64_t first_delta);
uint64_t tsc_codec2_odd_deltas_scalar(const int64_t *ts, size_t n, int64_t prev, size_t from,
                                      uint64_t first_delta);
int tsc_codec2_odd_deltas_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, size_t from,
                               uint64_t first_delta, uint64_t *odd);
uint64_t tsc_codec2_odd_values(const uint64_t *bits, size_t n, uint64_t first_bits);
uint64_t tsc_codec2_odd_values_scalar(const uint64_t *bits, size_t n, uint64_t first_bits);
int tsc_codec2_odd_values_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t first_bits, uint64_t *odd);
/* repeats: how many bits[i] equal the value before them (bits[-1] = prev) */
size_t tsc_codec2_repeats(const uint64_t *bits, size_t n, uint64_t prev);
size_t tsc_codec2_repeats_scalar(const uint64_t *bits, size_t n, uint64_t prev);
int tsc_codec2_repeats_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t prev, size_t *repeats);
/* repeat_mask: bit i of mask[i / 64] set when bits[i] equals the value before it (bits[-1] = prev; the words
 * past n zero), the other values into kept in order (n <= TSC2_GROUP). @return how many were kept; the
 * _simd dispatcher SIZE_MAX when no kernel runs here. */
size_t tsc_codec2_repeat_mask(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask, uint64_t *kept);
size_t tsc_codec2_repeat_mask_scalar(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask, uint64_t *kept);
size_t tsc_codec2_repeat_mask_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask,
                                   uint64_t *kept);
/* left_part_counts: how many of bits[0, n) have each of the TSC2_SPLIT_DICT candidates as their left part
 * (bits >> right_bits, right_bits < 64), and which have none of them: bit i of outside[i / 64] (the words past
 * n zero; n <= TSC2_GROUP). An unused candidate is UINT64_MAX, which no left part is. */
void tsc_codec2_left_part_counts(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *candidates,
                                 size_t *counts, uint64_t *outside);
void tsc_codec2_left_part_counts_scalar(const uint64_t *bits, size_t n, unsigned right_bits,
                                        const uint64_t *candidates, size_t *counts, uint64_t *outside);
int tsc_codec2_left_part_counts_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned right_bits,
                                     const uint64_t *candidates, size_t *counts, uint64_t *outside);
/* split_patches: the fields wider than `width` bits, for a PATCHED list: their indexes into at and their high
 * bits (fields[i] >> width) into high, in order, and those fields cut to their low bits (m <= TSC2_GROUP).
 * @return how many; the _simd dispatcher SIZE_MAX when no kernel runs here. */
size_t tsc_codec2_split_patches(uint64_t *fields, size_t m, unsigned width, uint8_t *at, uint64_t *high);
size_t tsc_codec2_split_patches_scalar(uint64_t *fields, size_t m, unsigned width, uint8_t *at, uint64_t *high);
size_t tsc_codec2_split_patches_simd(unsigned isa, uint64_t *fields, size_t m, unsigned width, uint8_t *at,
                                     uint64_t *high);
/* exceptions: the slots of a decimal reading's diffs (0: the value reads exactly; n <= TSC2_GROUP) that are
 * not 0, in order: their diffs into correction and their index, | TSC2_EXCEPTION_RAW when FAR, into at; their
 * entries' bytes (tsc_codec2_exception_bytes) added to *bytes; *first_ok the first slot that is not FAR
 * (SIZE_MAX: none); nothing written past the exceptions.
 * @return how many; the _simd dispatcher SIZE_MAX when no kernel runs here. */
size_t tsc_codec2_exceptions(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at, size_t *bytes,
                             size_t *first_ok);
size_t tsc_codec2_exceptions_scalar(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at, size_t *bytes,
                                    size_t *first_ok);
size_t tsc_codec2_exceptions_simd(unsigned isa, const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at,
                                  size_t *bytes, size_t *first_ok);
/* goes_back: whether some ts[i] < ts[i-1] (ts[-1] = prev), append_many's check before it takes a group whole */
int tsc_codec2_goes_back(const int64_t *ts, size_t n, int64_t prev);
int tsc_codec2_goes_back_scalar(const int64_t *ts, size_t n, int64_t prev);
int tsc_codec2_goes_back_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, int *back);
int tsc_codec2_goes_back_avx512(const int64_t *ts, size_t n, int64_t prev);
/* sorted_tops: the top 16 bits of bits[0, n), sorted ascending (n <= TSC2_GROUP) */
void tsc_codec2_sorted_tops(const uint64_t *bits, size_t n, uint16_t *out);
void tsc_codec2_sorted_tops_scalar(const uint64_t *bits, size_t n, uint16_t *out);
void tsc_codec2_sorted_tops_avx512(const uint64_t *bits, size_t n, uint16_t *out); /* where tsc_avx512_here() */
/* split_codes: SPLIT's fields of bits[0, n) for a dictionary of left parts (bits >> right_bits): codes[i] the
 * index of the equal entry (0 when none), rights[i] the low right_bits, and the positions with no entry in
 * exception_at (room for n + 8). @return how many those are */
size_t tsc_codec2_split_codes(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *dict,
                              unsigned dict_size, uint64_t *codes, uint64_t *rights, uint8_t *exception_at);
size_t tsc_codec2_split_codes_scalar(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *dict,
                                     unsigned dict_size, uint64_t *codes, uint64_t *rights, uint8_t *exception_at);
/* (left parts of at most TSC2_SPLIT_MAX_LEFT bits: right_bits >= 48) SIZE_MAX: no kernel for isa here */
size_t tsc_codec2_split_codes_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned right_bits,
                                   const uint64_t *dict, unsigned dict_size, uint64_t *codes, uint64_t *rights,
                                   uint8_t *exception_at);
size_t tsc_codec2_split_codes_avx512(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *dict,
                                     unsigned dict_size, uint64_t *codes, uint64_t *rights, uint8_t *exception_at);
/* steps: out[i] = start + i * step (mod 2^64) */
void tsc_codec2_steps(uint64_t start, uint64_t step, size_t n, uint64_t *out);
void tsc_codec2_steps_scalar(uint64_t start, uint64_t step, size_t n, uint64_t *out);
int tsc_codec2_steps_simd(uint64_t start, uint64_t step, size_t n, uint64_t *out);
/* unpack_run: n fields of width 1..57 whose 8-byte loads all stay inside src's avail bytes (SIMD loads may
 * reach further, never past avail) */
void tsc_codec2_unpack_run(const uint8_t *src, size_t avail, uint64_t *fields, size_t n, unsigned width);
void tsc_codec2_unpack_run_scalar(const uint8_t *src, size_t avail, uint64_t *fields, size_t n, unsigned width);
int tsc_codec2_unpack_run_simd(unsigned isa, const uint8_t *src, size_t avail, uint64_t *fields, size_t n,
                               unsigned width);

/* encoder.c */
/*
 * How hard the group coder looks. BOUND: every form is sized, so the group is
 * never larger than its XOR, RAW and hint forms (the appender's max_bytes
 * bound relies on it). FULL: XOR and SPLIT are sized only when they may win.
 * REUSE: the previous group's form (prev_form: DECIMAL or MASKED in the
 * hint's reading, or SPLIT) is written without trying the others when it
 * still fits this group (encoder.c, reuse_form); otherwise as FULL.
 */
enum { TSC2_EFFORT_FULL = 0, TSC2_EFFORT_BOUND = 1, TSC2_EFFORT_REUSE = 2 };

/*
 * A decimal group's packing, for the next group: TSC2_PACK_FOR or _DELTA, TSC2_PACK_PATCHED, and the fields'
 * width from bit 3 on (tsc2_packing_of). TSC2_PACK_BOTH asks a group coder to search the patches of both.
 */
enum { TSC2_PACK_FOR = 1, TSC2_PACK_DELTA = 2, TSC2_PACK_BOTH = 3, TSC2_PACK_PATCHED = 4 };
TSC_INLINE unsigned tsc2_packing_of(int delta, int patched, unsigned width)
{
    return (delta ? TSC2_PACK_DELTA : TSC2_PACK_FOR) | (patched ? TSC2_PACK_PATCHED : 0) | width << 3;
}

/* The timestamp forms, for the caller's bookkeeping (SEARCH: try both). */
enum { TSC2_TS_SEARCH, TSC2_TS_FORM_DELTA, TSC2_TS_FORM_GRID };

/* The value forms a group coder picks from, for its caller's bookkeeping. */
enum { TSC2_FORM_CONST, TSC2_FORM_MASKED, TSC2_FORM_DECIMAL, TSC2_FORM_XOR, TSC2_FORM_SPLIT, TSC2_FORM_RAW,
       TSC2_FORMS };

enum { TSC2_SCALE_OFF, TSC2_SCALE_ON, TSC2_SCALE_USED }; /* tschunk_encoder.ts_scaled */

/* What a group coder is told of the previous group's choices, and reports of its own. */
typedef struct {
    tsc_codec2_decimal reading; /* in: the hint (may be unusable); out: the reading written, if any */
    unsigned value_form;        /* in: the previous form (REUSE); out: this group's (TSC2_FORMS: won narrowly) */
    unsigned ts_form;           /* in: the form to write without trying the other, or TSC2_TS_SEARCH; out: this group's */
    unsigned ts_width;          /* in: the previous group's timestamp width (used with a ts_form); out: this group's */
    unsigned split_left;        /* in: the last SPLIT group's left width (REUSE of SPLIT plans only it); out: updated */
    unsigned challenger;        /* in: XOR when it came within a quarter of value_form (REUSE sizes it too), else
                                 * TSC2_FORMS; out: this group's */
    int regular;                /* in: every step inside the group is regular_step (the appender tracks it) */
    uint64_t regular_step;
    int ts_scaled;              /* in: the chunk is TS_SCALED (every timestamp block of 2+ samples has a scale);
                                 * out: TSC2_SCALE_USED when this group's scale is above 1 */
    tschunk_split_dict *split_dict; /* in: the last SPLIT group's dictionary (REUSE's candidates; size 0: none);
                                     * out: updated when this group is SPLIT. NULL: not kept */
    unsigned packing;           /* in: the previous group's decimal packing (REUSE patches that form at that
                                 * width only; a search sizes every width of both); out: this group's, 0 when
                                 * it is not a decimal group */
    size_t ts_bytes;            /* out: the group's timestamp block, its first bytes */
} tsc_codec2_choice;

/*
 * Encode one group. The hint reading is also tried, and taken without a
 * search when it still fits (REUSE); a group that won narrowly reports
 * TSC2_FORMS, as it is not worth reusing blind. `choice` may be NULL (FULL,
 * no hint).
 */
/* Whether a chunk whose first group has these timestamps is TS_SCALED: its DELTA fields (each step less the
 * smallest) have a common divisor > 1 (so not when they are all 0: a regular group), and dividing by it makes
 * them smaller, patches and the scale counted. */
int tsc_codec2_scaled_chunk(const int64_t *ts, size_t n);
size_t tsc_codec2_encode_group(uint8_t *restrict out, const int64_t *restrict ts, const uint64_t *restrict bits,
                               size_t n, int64_t prev_ts, uint64_t prev_bits, int effort, tsc_codec2_choice *choice);

/*
 * The append fast path (lib/chunk/encoder.c, and the inline append) stores a sample and moves only pending
 * and prev_ts: keeping count, safe_left and prev_bits up to date too was three more stores in a path of 24
 * instructions (0.27.0: 4% fewer instructions one at a time, 4% less time inline). Those three are the
 * open group's first c2.synced samples' (the lag, read here), and tsc_codec2_sync brings them up to date
 * before anything else uses them. Refusals are decided before any sync, so a refused sample changes
 * nothing at all, not even the lag.
 */
/* The open group's raw sample i, behind the finished groups: 16 bytes, the time then the value's bits, both
 * little-endian (tschunk.h's inline append writes them too). */
#define TSC2_RAW_SAMPLE 16u
TSC_INLINE uint8_t *tsc_codec2_raw_slot(const tschunk_encoder *enc, uint32_t i)
{
    return enc->dst + TSCHUNK_HEADER_MAX + enc->c2.group_end + TSC2_RAW_SAMPLE * (size_t)i;
}
TSC_INLINE uint32_t tsc_codec2_lag(const tschunk_encoder *enc) { return enc->c2.pending - enc->c2.synced; }
TSC_INLINE uint32_t tsc_codec2_count(const tschunk_encoder *enc) { return enc->count + tsc_codec2_lag(enc); }
TSC_INLINE uint32_t tsc_codec2_safe_left(const tschunk_encoder *enc) { return enc->safe_left - tsc_codec2_lag(enc); }
TSC_INLINE void tsc_codec2_sync(tschunk_encoder *enc)
{
    uint32_t lag = tsc_codec2_lag(enc);
    if (!lag) return;
    if (enc->count == 0) { /* the fast path took the chunk's first sample: its raw slot holds it */
        const uint8_t *first = tsc_codec2_raw_slot(enc, 0);
        enc->first_ts = (int64_t)tsc_load64_le(first);
        enc->first_bits = tsc_load64_le(first + 8);
    }
    enc->count += lag;
    enc->safe_left -= lag;
    enc->prev_bits = tsc_load64_le(tsc_codec2_raw_slot(enc, enc->c2.pending - 1) + 8); /* the last raw value */
    enc->c2.synced = enc->c2.pending;
}

/* appender.c: the append fast path runs while pending < fast_end; a full group is flushed here (synced first). */
void tsc_codec2_flush(tschunk_encoder *enc);
/* appender.c: safe_left and fast_end from the encoder's limits (init sets them for the first sample). */
void tsc_codec2_refresh_fast(tschunk_encoder *enc);
/*
 * appender.c, for tschunk_append_many: groups completed from the caller's
 * arrays and encoded at once (the open group's raw samples, then the
 * caller's), while a group certainly fits: the bytes raw appends and a flush
 * would write, without copying the caller's samples raw. Stops before a
 * group whose time goes back. @return the samples taken.
 */
size_t tsc_codec2_append_groups(tschunk_encoder *enc, const int64_t *ts, const double *values, size_t n);
/*
 * The smallest exponent (0..15) that reads the value exactly, else the smallest that reads it NEAR within
 * TSC2_SEARCH_NEAR_ULPS, else -1; exponents past the one where |value| * 10^e reaches TSC2_SEARCH_MAX_K
 * are not tried. The scalar loop and its AVX2 twin (simd.c: all sixteen readings four at a time, 1 when
 * it ran), which the tests compare.
 */
#define TSC2_SEARCH_MAX_K 0x1p51
#define TSC2_SEARCH_NEAR_ULPS 16
int tsc_codec2_smallest_exponent(uint64_t bits, int as_float);
int tsc_codec2_smallest_exponent_scalar(uint64_t bits, int as_float);
int tsc_codec2_smallest_exponent_simd(uint64_t bits, int as_float, int *exponent);

/* decoder.c: a group's blocks (those the frame's flags leave in), then its samples. */
size_t tsc_codec2_parse_group(const uint8_t *src, size_t avail, size_t n, unsigned flags, tsc_codec2_group *g);
/*
 * The group of n samples at src + at in the chunk src[0, size) (its last group when `last`, which must then
 * end it): parsed and decoded into ts/bits after prev_ts/prev_bits (first: the chunk's first group, whose
 * previous sample is not checked). @return the group's size in bytes, or an error.
 */
size_t tsc_codec2_read_group(const uint8_t *src, size_t size, size_t at, size_t n, const tsc_codec2_frame *f, int first,
                             int last, int64_t prev_ts, uint64_t prev_bits, int64_t *restrict ts,
                             uint64_t *restrict bits);
/*
 * A whole chunk whose header parse (TSC_PARSE_HEADER) gave info, its groups
 * starting at byte `at`, into ts/bits (info->count entries): what an iterator
 * reading it to the end gives, the same error included. @return the count or an error.
 */
size_t tsc_codec2_decode_chunk(const uint8_t *src, size_t size, const tschunk_chunk_info *info, size_t at,
                               int64_t *restrict ts, uint64_t *restrict bits);
/*
 * The header fields after the count at *pos (flags from info), then every
 * group (none when `walk` is 0): fills info's first_ts, first_delta,
 * first_bits (as the flags give them), header_bytes and, when walking, the
 * stream sizes; *pos ends at the first group.
 */
size_t tsc_codec2_parse_chunk(const uint8_t *src, size_t size, size_t *pos, tschunk_chunk_info *info, int walk);

/* appender.c: codec 2 behind tschunk_append and tschunk_encoder_finish. */
size_t tsc_codec2_append(tschunk_encoder *enc, int64_t ts, uint64_t bits);
size_t tsc_codec2_finish(tschunk_encoder *enc);
size_t tsc_codec2_snapshot(const tschunk_encoder *enc, uint8_t *out, size_t capacity);

#endif
