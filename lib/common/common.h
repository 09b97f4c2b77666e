/* Internal: compiler macros, byte-order helpers, varints, error returns. */
#ifndef TSCHUNK_COMMON_H
#define TSCHUNK_COMMON_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tschunk.h"

/* Floating-point expressions are rounded as written, never a * b + c fused into one rounding: the sketch's mapping
 * must give sketches-java's bin indices to the bit (Java never fuses), and a library built with fusion put values
 * next to an index boundary into the neighbouring bin (clang fuses by default wherever the target has FMA: with
 * -march=native here, on every ARM64). The Makefile also passes -ffp-contract=off, for gcc, which ignores this
 * pragma and fuses in its GNU modes (-std=gnu11), not in -std=c11. */
#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#endif

/* For the same reason, doubles must be rounded as doubles. x87 arithmetic (32-bit x86 without SSE2 math) keeps
 * excess precision: the sketch's bins and sums would leave the reference libraries', and codec 2's decimal readings
 * could differ from another host's decoder (four fuzz corpora failed their checks in such a build). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 2
#  error "tschunk needs doubles rounded as doubles (FLT_EVAL_METHOD 0): on 32-bit x86, add -msse2 -mfpmath=sse"
#endif
/* And NaN, infinities and -0.0 must be what IEEE 754 says they are: built with -Ofast, 80 of the suite's 309 tests
 * failed, 61 of them the library's (NaN checks folded away, round trips no longer bit-exact). */
#if defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)
#  error "tschunk must be built without -ffast-math, -Ofast or -ffinite-math-only (NaN, infinities, -0.0 are data)"
#endif

/* The caller's allocator when both hooks are set, else malloc/free. */
tschunk_allocator tsc_allocator_or_default(const tschunk_allocator *a);

#if defined(__GNUC__)
#  define TSC_LIKELY(x) __builtin_expect(!!(x), 1)
#  define TSC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define TSC_INLINE static inline __attribute__((always_inline))
#  define TSC_PREFETCH(addr) __builtin_prefetch(addr)
/* A hot entry point on a 64-byte line of its own start: the same code measured 10% apart at two 16-byte offsets. */
#  define TSC_HOT_ENTRY __attribute__((aligned(64)))
#else
#  define TSC_LIKELY(x) (x)
#  define TSC_UNLIKELY(x) (x)
#  define TSC_INLINE static inline
#  define TSC_PREFETCH(addr) ((void)(addr))
#  define TSC_HOT_ENTRY
#endif

/* zstd-style error results: the negated code, seen as size_t. */
#define TSC_ERROR(name) ((size_t) - (ptrdiff_t)TSCHUNK_ERROR_##name)
#define TSC_ERROR_CODE(code) ((size_t) - (ptrdiff_t)(code))

/* tschunk_is_error for the library's own calls: inline, not a call to the exported symbol (which a shared
 * library would make through the PLT). */
TSC_INLINE int tsc_is_error(size_t result) { return result > TSC_ERROR_CODE(TSCHUNK_ERROR_MAX_CODE); }

/* x86-64 with GCC or clang: AVX2 kernels are compiled in, used where the CPU has them (no state kept).
 * -DTSC_NO_X86_KERNELS leaves them out, as any other CPU or compiler gets it (CI builds and tests that). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TSC_NO_X86_KERNELS)
#  define TSC_HAVE_AVX2 1
#endif

/*
 * Hot scalar paths (the appends' one-sample fast paths and bulk loops) compiled a second time with BMI1/2
 * (shifts by any register rather than CL), LZCNT and MOVBE, as x86-64-v3 CPUs have them, chosen by a flag
 * that the encoder's init sets from tsc_bmi_here(): a direct jump, where an ifunc (target_clones) made every
 * call of a statically linked append an indirect one and gave back half the gain. clang 14's
 * __builtin_cpu_supports knows neither LZCNT nor MOVBE, so its build takes BMI1/2 alone. Not with
 * -DTSC_NO_X86_KERNELS, which CI builds to test the baseline.
 */
#if defined(TSC_HAVE_AVX2) && !defined(__clang__)
#  define TSC_BMI_TARGET __attribute__((target("bmi,bmi2,lzcnt,movbe")))
#  define TSC_BMI_CPU() (__builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && \
                         __builtin_cpu_supports("lzcnt") && __builtin_cpu_supports("movbe"))
#elif defined(TSC_HAVE_AVX2)
#  define TSC_BMI_TARGET __attribute__((target("bmi,bmi2")))
#  define TSC_BMI_CPU() (__builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
#else
#  define TSC_BMI_CPU() 0
#endif

/* The call to a function's BMI build when the state's isa byte (set at init from tsc_bmi_here) says so. */
#ifdef TSC_BMI_TARGET
#  define TSC_BMI_CHOOSE(state, bmi_call, plain_call) (TSC_LIKELY((state)->isa) ? (bmi_call) : (plain_call))
#else
#  define TSC_BMI_CHOOSE(state, bmi_call, plain_call) (plain_call)
#endif

/* Whether the CPU has what TSC_BMI_TARGET builds for. */
TSC_INLINE int tsc_bmi_here(void) { return TSC_BMI_CPU(); }

TSC_INLINE int tsc_avx2_here(void)
{
#ifdef TSC_HAVE_AVX2
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* AVX-512 with the byte permute (F, BW, VBMI): Ice Lake and later, Zen 4 and later. A build with
 * -DTSC_NO_AVX512 keeps to AVX2 (to measure what a CPU without it gets). */
TSC_INLINE int tsc_avx512_here(void)
{
#if defined(TSC_HAVE_AVX2) && !defined(TSC_NO_AVX512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi");
#else
    return 0;
#endif
}

/* Which loops a batch decode may use; the tests run each on the same chunks and compare. */
enum {
    TSC_LOOPS_AUTO,    /* unchecked where the stream has room (BMI2 twin when the CPU has it), checked after */
    TSC_LOOPS_CHECKED, /* the bounds-checked loop only */
    TSC_LOOPS_SCALAR,  /* as AUTO, without the BMI2 twin */
    TSC_LOOPS_AVX2     /* as AUTO, lists of chunks in AVX2 lanes even where AVX-512 lanes would run */
};

TSC_INLINE unsigned tsc_clz64(uint64_t x) { return x ? (unsigned)__builtin_clzll(x) : 64u; }
TSC_INLINE unsigned tsc_ctz64(uint64_t x) { return x ? (unsigned)__builtin_ctzll(x) : 64u; }

/* Without -mpopcnt, __builtin_popcount is a libgcc call per word; this is a dozen instructions. */
TSC_INLINE unsigned tsc_popcount64(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

TSC_INLINE uint64_t tsc_load64_be(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

TSC_INLINE void tsc_store64_be(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* One unaligned load or store (gcc 12 does not fuse the byte-loop form at -O2). */
TSC_INLINE uint64_t tsc_load64_le(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

TSC_INLINE void tsc_store64_le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* A double's IEEE-754 bit pattern and back (values are compared as bit patterns, never with ==). */
TSC_INLINE uint64_t tsc_bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

TSC_INLINE double tsc_double_of(uint64_t b)
{
    double v;
    memcpy(&v, &b, 8);
    return v;
}

/* The sign spread by unsigned arithmetic: a signed right shift is implementation-defined in C11. */
TSC_INLINE uint64_t tsc_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63)); }

/* An iterator's buffered samples [*at, len) into the caller's arrays (either may be NULL) from `n` on, up to
 * `end`, *at moved past them: the block reads of codec 1's and the Prometheus iterators. @return samples taken. */
TSC_INLINE size_t tsc_take_buffered(const int64_t *buf_ts, const uint64_t *buf_bits, uint32_t *at, uint32_t len,
                                    int64_t *ts, double *values, size_t n, size_t end)
{
    size_t buffered = len - *at, take = end - n < buffered ? end - n : buffered;
    if (!take) return 0; /* a decode's first read has nothing buffered: two empty memcpy calls cost it 24 instructions */
    if (ts) memcpy(ts + n, buf_ts + *at, take * sizeof *ts);
    if (values) memcpy(values + n, buf_bits + *at, take * sizeof *values);
    *at += (uint32_t)take;
    return take;
}

TSC_INLINE int64_t tsc_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* LEB128: 7 bits per byte, least significant group first, 0x80 = more. */
/* Bytes of the uvarint: ceil(significant bits / 7), at least 1. (9 * bits + 64) / 64 equals it for every width
 * from 1 to 64 bits (protobuf's VarintSize64 form; tests/test_bitstream.c checks each width) and needs no loop,
 * which the codec-2 planners, sizing several varints a group, used to run. */
TSC_INLINE size_t tsc_uvarint_len(uint64_t v)
{
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    return (bits * 9u + 64u) / 64u;
}

TSC_INLINE size_t tsc_put_uvarint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) { p[n++] = (uint8_t)(v | 0x80); v >>= 7; }
    p[n++] = (uint8_t)v;
    return n;
}

/* @return bytes read, 0 when truncated or longer than 10 bytes / 64 bits. (A one-load, shift-and-mask
 * form was measured on segment open: 40% more instructions, as most index varints are 1-2 bytes.) */
TSC_INLINE size_t tsc_get_uvarint(const uint8_t *p, size_t avail, uint64_t *out)
{
    if (TSC_LIKELY(avail >= 10)) { /* the common case: no bounds check per byte */
        uint64_t b = p[0], v = b & 0x7f;
        if (b < 0x80) {
            *out = b;
            return 1;
        }
        for (unsigned i = 1; i < 9; i++) {
            b = p[i];
            if (b < 0x80) {
                if (b == 0) return 0; /* non-canonical: a trailing zero group */
                *out = v | b << (7 * i);
                return i + 1;
            }
            v |= (b & 0x7f) << (7 * i);
        }
        if (p[9] != 1) return 0; /* the 10th byte holds bit 63 only, and ends the varint */
        *out = v | UINT64_C(1) << 63;
        return 10;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < avail && i < 10; i++) {
        uint64_t b = p[i];
        if (i == 9 && b > 1) return 0; /* would overflow 64 bits */
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            if (i > 0 && b == 0) return 0; /* non-canonical: trailing zero group */
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

/* A uvarint at *pos of src[0, size): advances *pos. @return 0, TRUNCATED when the bytes end inside
 * it, CORRUPT when it is over-long or non-canonical. */
TSC_INLINE size_t tsc_take_uvarint(const uint8_t *src, size_t size, size_t *pos, uint64_t *out)
{
    if (TSC_LIKELY(*pos < size && src[*pos] < 0x80)) { /* one byte: most of them */
        *out = src[(*pos)++];
        return 0;
    }
    if (TSC_LIKELY(*pos + 1 < size && (unsigned)src[*pos + 1] - 1u < 0x7fu)) { /* two (a canonical second byte) */
        *out = (src[*pos] & 0x7fu) | (uint64_t)src[*pos + 1] << 7;
        *pos += 2;
        return 0;
    }
    size_t n = tsc_get_uvarint(src + *pos, size - *pos, out);
    if (n == 0) {
        size_t i = *pos;
        while (i < size && i - *pos < 10 && (src[i] & 0x80)) i++;
        return i == size ? TSC_ERROR(TRUNCATED) : TSC_ERROR(CORRUPT);
    }
    *pos += n;
    return 0;
}

#endif
