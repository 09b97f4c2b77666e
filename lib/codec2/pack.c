/*
 * Bit packing of codec-2 fields. Packing keeps a 64-bit accumulator and
 * stores whole 8-byte words; unpacking loads 8 bytes at each field's first
 * byte, so fields up to 57 bits need one load (simd.c: unpack_run). Loads never pass `avail` (the chunk's end): the last fields
 * go through a zero-padded copy.
 */
#include "format.h"
#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#endif

/*
 * Fields of up to 16 bits, eight at a time: eight fields fill exactly `width`
 * bytes, built as two 4-field words without a branch, stored as one 8-byte
 * word (up to 8 bits) or 16 bytes (the bytes past the block are zeros the
 * next block overwrites). Runs from field `from` (a multiple of 8) while the
 * stores stay inside the packed bytes. @return fields packed (from the first).
 */
static size_t pack_eights(uint8_t *restrict dst, const uint64_t *restrict fields, size_t from, size_t n,
                          unsigned width)
{
    const unsigned w = width, half = 4 * width;
    const size_t total = tsc_codec2_packed_bytes(n, width);
    size_t i = from, at = from / 8 * width;
    if (width <= 8) { /* eight fields fit one word: one store */
        for (; i + 8 <= n && at + 8 <= total; i += 8, at += width) {
            const uint64_t *f = fields + i;
            uint64_t low = f[0] | f[1] << w | f[2] << 2 * w | f[3] << 3 * w;
            uint64_t high = f[4] | f[5] << w | f[6] << 2 * w | f[7] << 3 * w;
            tsc_store64_le(dst + at, low | high << half);
        }
        return i;
    }
    for (; i + 8 <= n && at + 16 <= total; i += 8, at += width) {
        const uint64_t *f = fields + i;
        uint64_t low = f[0] | f[1] << w | f[2] << 2 * w | f[3] << 3 * w;
        uint64_t high = f[4] | f[5] << w | f[6] << 2 * w | f[7] << 3 * w;
        tsc_store64_le(dst + at, half < 64 ? low | high << half : low);
        tsc_store64_le(dst + at + 8, half < 64 ? high >> (64 - half) : high);
    }
    return i;
}

/* A run of fields packed through one 64-bit accumulator (stores of whole words). */
typedef struct {
    uint8_t *at;
    uint64_t acc;
    unsigned filled;
} pack_run;

TSC_INLINE void pack_field(pack_run *r, uint64_t field, unsigned width)
{
    r->acc |= field << r->filled;
    unsigned total = r->filled + width;
    if (total >= 64) {
        tsc_store64_le(r->at, r->acc);
        r->at += 8;
        r->acc = r->filled ? field >> (64 - r->filled) : 0;
        total -= 64;
    }
    r->filled = total;
}

/* A run's last bits, in whole bytes (the packed bytes end there; nothing is written past them). */
TSC_INLINE void pack_end(pack_run *r)
{
    for (unsigned b = 0; b < r->filled; b += 8) *r->at++ = (uint8_t)(r->acc >> b);
}

/*
 * Fields wider than 16 bits as four runs of q fields (q a multiple of 8, so each run starts and ends on a
 * byte) packed side by side: four accumulator chains instead of one, which waits on itself (~3 cycles a
 * field). @return fields packed.
 */
static size_t pack_fours(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width)
{
    size_t q = n / 32 * 8, run_bytes = q * width / 8;
    pack_run r0 = {dst, 0, 0}, r1 = {dst + run_bytes, 0, 0}, r2 = {dst + 2 * run_bytes, 0, 0};
    pack_run r3 = {dst + 3 * run_bytes, 0, 0};
    for (size_t i = 0; i < q; i++) {
        pack_field(&r0, fields[i], width);
        pack_field(&r1, fields[q + i], width);
        pack_field(&r2, fields[2 * q + i], width);
        pack_field(&r3, fields[3 * q + i], width);
    }
    pack_end(&r0), pack_end(&r1), pack_end(&r2), pack_end(&r3); /* each run ends on a byte */
    return 4 * q;
}

/* The fields from `done` on (a multiple of 8: a byte boundary), one by one. */
static void pack_rest(uint8_t *restrict dst, const uint64_t *restrict fields, size_t done, size_t n, unsigned width)
{
    pack_run rest = {dst + done / 8 * width, 0, 0};
    for (size_t i = done; i < n; i++) pack_field(&rest, fields[i], width);
    pack_end(&rest);
}

void tsc_codec2_pack_scalar(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width)
{
    if (width == 0) return;
    pack_rest(dst, fields, width <= 16 ? pack_eights(dst, fields, 0, n, width) : pack_fours(dst, fields, n, width),
              n, width);
}

#ifdef TSC_HAVE_AVX2
/*
 * pack_eights for CPUs with AVX2 but not AVX-512 (whose kernel packs sixteen at a time with byte permutes):
 * each four fields shifted to their places in one word by one variable shift and ORed across lanes, then
 * the two words as one 128-bit value (the second shifted up by 4 * width), stored as 16 bytes while they
 * stay inside the packed bytes. Fields of 1 to 16 bits.
 */
__attribute__((target("avx2"))) static void pack_eights_avx2(uint8_t *restrict dst, const uint64_t *restrict fields,
                                                              size_t n, unsigned width)
{
    const int64_t w = width, half = 4 * w;
    const __m256i places = _mm256_set_epi64x(3 * w, 2 * w, w, 0);
    const __m128i up = _mm_set_epi64x(half, 0), down = _mm_set_epi64x(64 - half, 64); /* 64: shifted out */
    const size_t total = tsc_codec2_packed_bytes(n, width);
    size_t i = 0, at = 0;
    for (; i + 8 <= n && at + 16 <= total; i += 8, at += width) {
        __m256i a, b;
        memcpy(&a, fields + i, sizeof a);
        memcpy(&b, fields + i + 4, sizeof b);
        a = _mm256_sllv_epi64(a, places);
        b = _mm256_sllv_epi64(b, places);
        __m256i pairs = _mm256_or_si256(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
        __m128i words = _mm_or_si128(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
        __m128i low = _mm_sllv_epi64(words, up); /* the first word, the second's low part above it */
        low = _mm_or_si128(low, _mm_bsrli_si128(low, 8));
        __m128i block = _mm_blend_epi32(low, _mm_srlv_epi64(words, down), 0xc); /* the second's high part */
        memcpy(dst + at, &block, sizeof block);
    }
    /* Up to 8 bits, the scalar loop's 8-byte stores take a block or two more before the fields one by one. */
    pack_rest(dst, fields, width <= 8 ? pack_eights(dst, fields, i, n, width) : i, n, width);
}
#endif

/* Inlined into both callers, so that the encoder's (isa a constant) pays no call and no isa test a packing. */
TSC_INLINE int pack_simd(unsigned isa, uint8_t *dst, const uint64_t *fields, size_t n, unsigned width)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && width >= 1 && width <= 57 && tsc_avx512_here()) {
        if (width <= 16) tsc_codec2_pack_narrow_avx512(dst, fields, n, width);
        else if (width <= 32) tsc_codec2_pack_wide_avx512(dst, fields, n, width);
        else tsc_codec2_pack_long_avx512(dst, fields, n, width);
        return 1;
    }
    if (width >= 1 && width <= 16 && tsc_avx2_here()) {
        pack_eights_avx2(dst, fields, n, width);
        return 1;
    }
#endif
    (void)isa, (void)dst, (void)fields, (void)n, (void)width;
    return 0;
}

int tsc_codec2_pack_simd(unsigned isa, uint8_t *dst, const uint64_t *fields, size_t n, unsigned width)
{
    return pack_simd(isa, dst, fields, n, width);
}

void tsc_codec2_pack(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width)
{
    if (!pack_simd(TSC_SIMD_BEST, dst, fields, n, width)) tsc_codec2_pack_scalar(dst, fields, n, width);
}

/* Field i when its 8 (or 9) bytes are all inside the buffer. */
TSC_INLINE uint64_t unpack_one(const uint8_t *src, size_t i, unsigned width, uint64_t mask)
{
    size_t bit = i * width;
    unsigned shift = (unsigned)(bit & 7);
    uint64_t v = tsc_load64_le(src + (bit >> 3)) >> shift;
    if (width + shift > 64) v |= (uint64_t)src[(bit >> 3) + 8] << (64 - shift);
    return v & mask;
}

void tsc_codec2_unpack(const uint8_t *restrict src, size_t avail, uint64_t *restrict fields, size_t n, unsigned width)
{
    if (width == 0) {
        memset(fields, 0, n * sizeof *fields);
        return;
    }
    uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
    /* Fields whose loads (up to 9 bytes from their first byte) stay inside avail. */
    size_t fast = avail >= 9 ? ((avail - 9) * 8) / width + 1 : 0;
    if (fast > n) fast = n;
    size_t i = 0;
    if (width <= 57) {
        tsc_codec2_unpack_run(src, avail, fields, fast, width);
        i = fast;
    } else {
        for (; i < fast; i++) fields[i] = unpack_one(src, i, width, mask);
    }
    if (i == n) return;
    uint8_t tail[TSC2_GROUP * 8 + 16];
    size_t from = (i * width) >> 3, need = tsc_codec2_packed_bytes(n, width) - from;
    memcpy(tail, src + from, need);
    memset(tail + need, 0, 16);
    for (; i < n; i++) {
        size_t bit = i * width - from * 8;
        uint64_t v = tsc_load64_le(tail + (bit >> 3)) >> (bit & 7);
        if (width + (bit & 7) > 64) v |= (uint64_t)tail[(bit >> 3) + 8] << (64 - (bit & 7));
        fields[i] = v & mask;
    }
}
