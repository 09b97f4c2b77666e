/*
 * Prometheus XOR chunks decoded in the 64-bit lanes of AVX-512 registers,
 * eight chunks a set and one sample of each per step; two sets side by side
 * for sixteen chunks (tschunk_prom_decode_chunks).
 *
 * Why: a chunk's samples are one serial chain (a field's length is known only
 * once it is read), and two chunks side by side (decoder.c's pair loop) still
 * leave the CPU waiting on it. Here every lane runs the same branch-free
 * steps on its own chunk: 32 bytes are fetched at each lane's position (one
 * load a lane, transposed), the dod's four prefix bits pick its length, bias
 * and mask from 16-entry tables (vpermt2q), and the XOR field's control bits
 * become masks. A sample without a 64-bit dod takes at most 24 + 13 + 64 =
 * 101 bits (dod, XOR control and window, meaningful bits), so a fetch from the
 * byte of a sample's first bit serves it and the next one (7 + 2 x 101 <=
 * 256). A 64-bit dod (the `1111` escape) stops the kernel before that step:
 * decoder.c takes that step of every lane with the scalar loop and calls it
 * again.
 *
 * The steps give the bits of decoder.c's read_sample (the tests and
 * fuzz_prom_decode compare every loop choice on the same chunks); a window
 * with lead + width > 64 sets `bad`, as there, and its values are then
 * unspecified (the decode reports CORRUPT).
 */
#include "decoder.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define AVX512 __attribute__((target("avx512f,avx512bw")))
#  define AVX512_INLINE __attribute__((target("avx512f,avx512bw"), always_inline)) static inline

/* Each bit from a where mask has it set, else from b (vpternlogq: no mask registers, no blends). */
AVX512_INLINE __m512i select_bits(__m512i mask, __m512i a, __m512i b)
{
    return _mm512_ternarylogic_epi64(mask, a, b, 0xca);
}

/* All ones where x is 1, zero where it is 0. */
AVX512_INLINE __m512i all_if(__m512i x) { return _mm512_sub_epi64(_mm512_setzero_si512(), x); }

/* The 64 bits at bit `at` (<= 64) of the 128 bits hi:lo (most significant first); 0 past them. */
AVX512_INLINE __m512i bits_at(__m512i hi, __m512i lo, __m512i at)
{
    __m512i lo_at = _mm512_sub_epi64(_mm512_set1_epi64(64), at);
    return _mm512_or_si512(_mm512_sllv_epi64(hi, at), _mm512_srlv_epi64(lo, lo_at));
}

/* A 16-entry table of 64-bit entries indexed by each lane's 4-bit key. */
typedef struct {
    __m512i low, high;
} table16;

AVX512_INLINE __m512i look_up(table16 t, __m512i key) { return _mm512_permutex2var_epi64(t.low, key, t.high); }

/*
 * The dod field by its first four bits: `0` (keys 0-7), `10`+14 (8-11), `110`+17 (12, 13), `1110`+20 (14);
 * 15 is the escape. One table holds each key's field length (low byte) and payload bits (second byte).
 */
AVX512_INLINE table16 dod_table(void)
{
    table16 t = {_mm512_set1_epi64(1),
                 _mm512_set_epi64(68, 24 | 20 << 8, 20 | 17 << 8, 20 | 17 << 8, 16 | 14 << 8, 16 | 14 << 8,
                                  16 | 14 << 8, 16 | 14 << 8)};
    return t;
}

/* The lanes' state, one register a field. */
typedef struct {
    __m512i base, pos, delta, ts, bits, lead, width, last_byte;
    __m512i bad; /* sign bit: a window with lead + width > 64 */
} lane_set;

/* A field of eight lane structs, one a qword. */
#  define LANE_FIELDS(l, field, type)                                                                             \
      _mm512_set_epi64((type)(l)[7].field, (type)(l)[6].field, (type)(l)[5].field, (type)(l)[4].field,          \
                       (type)(l)[3].field, (type)(l)[2].field, (type)(l)[1].field, (type)(l)[0].field)

AVX512_INLINE lane_set lanes_load(const tsc_prom_lane *l)
{
    lane_set s;
    s.base = LANE_FIELDS(l, base, uintptr_t);
    s.pos = LANE_FIELDS(l, pos, long long);
    s.delta = LANE_FIELDS(l, delta, long long);
    s.ts = LANE_FIELDS(l, ts, long long);
    s.bits = LANE_FIELDS(l, bits, long long);
    s.lead = LANE_FIELDS(l, lead, long long);
    s.width = LANE_FIELDS(l, width, long long);
    s.last_byte = LANE_FIELDS(l, last_byte, long long);
    s.bad = _mm512_setzero_si512();
    return s;
}

AVX512_INLINE void lanes_store(const lane_set *s, tsc_prom_lane *l)
{
    uint64_t pos[8], delta[8], ts[8], bits[8], lead[8], width[8];
    __mmask8 bad = _mm512_cmplt_epi64_mask(s->bad, _mm512_setzero_si512());
    _mm512_storeu_si512(pos, s->pos);
    _mm512_storeu_si512(delta, s->delta);
    _mm512_storeu_si512(ts, s->ts);
    _mm512_storeu_si512(bits, s->bits);
    _mm512_storeu_si512(lead, s->lead);
    _mm512_storeu_si512(width, s->width);
    for (int k = 0; k < 8; k++) {
        l[k].pos = pos[k];
        l[k].delta = delta[k];
        l[k].ts = (int64_t)ts[k];
        l[k].bits = bits[k];
        l[k].lead = (uint32_t)lead[k];
        l[k].width = (uint32_t)width[k];
        l[k].bad |= (bad >> k) & 1;
    }
}

enum { STEP_DONE, STEP_NO_ROOM, STEP_ESCAPE };

/* 32 bytes of each lane's stream, as four big-endian words: two samples' worth (2 x 108 bits + 7). */
typedef struct {
    __m512i word[4];
} window;

/* The 64 bits at bit `at` (< 192) of a window. */
AVX512_INLINE __m512i window_bits(const window *w, __m512i at)
{
    __m512i index = _mm512_srli_epi64(at, 6), one = _mm512_set1_epi64(1);
    __m512i past0 = all_if(_mm512_srli_epi64(_mm512_add_epi64(index, one), 1));
    __m512i past1 = all_if(_mm512_srli_epi64(index, 1));
    __m512i hi = select_bits(past1, w->word[2], select_bits(past0, w->word[1], w->word[0]));
    __m512i lo = select_bits(past1, w->word[3], select_bits(past0, w->word[2], w->word[1]));
    return bits_at(hi, lo, _mm512_and_si512(at, _mm512_set1_epi64(63)));
}

/* The 64 bits at *at: a sample's dod and XOR head (first: *at < 64, the first two words hold the sample).
 * @return STEP_ESCAPE at a 64-bit dod (the sample is left to the scalar loop), else STEP_DONE. */
AVX512_INLINE int lanes_fields(const window *w, __m512i at, int first, __m512i *fields)
{
    *fields = first ? bits_at(w->word[0], w->word[1], at) : window_bits(w, at);
    return _mm512_cmpeq_epi64_mask(_mm512_srli_epi64(*fields, 60), _mm512_set1_epi64(15)) ? STEP_ESCAPE : STEP_DONE;
}

/* One sample of every lane from its fields (lanes_fields), *at moved past it. */
AVX512_INLINE void lanes_advance(lane_set *s, const window *w, __m512i *at, __m512i fields, const table16 *dods,
                                  int first)
{
    const __m512i sixty_four = _mm512_set1_epi64(64);
    __m512i entry = look_up(*dods, _mm512_srli_epi64(fields, 60));
    __m512i total = _mm512_and_si512(entry, _mm512_set1_epi64(0xff));
    /* As decoder.c: an n-bit payload v is ((v + b) mod 2^n) - b with b = 2^(n-1) - 1 (n = 0: 0). */
    __m512i mask = _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_srli_epi64(entry, 8)),
                                    _mm512_set1_epi64(1));
    __m512i bias = _mm512_srli_epi64(mask, 1);
    __m512i dod = _mm512_add_epi64(_mm512_srlv_epi64(fields, _mm512_sub_epi64(sixty_four, total)), bias);
    dod = _mm512_sub_epi64(_mm512_and_si512(dod, mask), bias);
    /* The XOR field, within the same 64 bits (a dod takes <= 24, the field's head 13): `0`, `10` + window
     * bits, `11` + 5-bit lead + 6-bit width (0 is 64) + width bits. */
    __m512i head = _mm512_sllv_epi64(fields, total), one = _mm512_set1_epi64(1);
    __m512i kind = _mm512_srli_epi64(head, 62), changed01 = _mm512_srli_epi64(kind, 1);
    __m512i changed = all_if(changed01), fresh = all_if(_mm512_and_si512(changed01, kind));
    __m512i control = _mm512_add_epi64(one, changed01); /* bits before the meaningful ones: 1, 2 or 13 */
    control = _mm512_add_epi64(control, _mm512_and_si512(fresh, _mm512_set1_epi64(11)));
    __m512i width = _mm512_and_si512(_mm512_srli_epi64(head, 51), _mm512_set1_epi64(63));
    width = _mm512_add_epi64(_mm512_and_si512(_mm512_sub_epi64(width, one), _mm512_set1_epi64(63)), one); /* 0 is 64 */
    s->width = select_bits(fresh, width, s->width);
    s->lead = select_bits(fresh, _mm512_and_si512(_mm512_srli_epi64(head, 57), _mm512_set1_epi64(31)), s->lead);
    __m512i end = _mm512_add_epi64(s->lead, s->width);
    s->bad = _mm512_or_si512(s->bad, _mm512_and_si512(fresh, _mm512_sub_epi64(sixty_four, end))); /* sign: end > 64 */
    __m512i meaningful_at = _mm512_add_epi64(_mm512_add_epi64(*at, total), control);
    __m512i next = _mm512_add_epi64(meaningful_at, _mm512_and_si512(changed, s->width));
    s->pos = _mm512_add_epi64(s->pos, _mm512_sub_epi64(next, *at));
    *at = next;
    __m512i raw = first ? bits_at(w->word[0], w->word[1], meaningful_at) : window_bits(w, meaningful_at);
    __m512i meaningful = _mm512_srlv_epi64(raw, _mm512_sub_epi64(sixty_four, s->width));
    /* sllv gives 0 for a count above 63: only a bad window's (lead + width > 64) */
    __m512i x = _mm512_and_si512(changed, _mm512_sllv_epi64(meaningful, _mm512_sub_epi64(sixty_four, end)));
    s->bits = _mm512_xor_si512(s->bits, x);
    s->delta = _mm512_add_epi64(s->delta, dod);
    s->ts = _mm512_add_epi64(s->ts, s->delta);
}

/* 32 bytes at each of two addresses, in the low and high halves. */
AVX512_INLINE __m512i load_pair(uint64_t low, uint64_t high)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const void *)(uintptr_t)low)),
                              _mm256_loadu_si256((const void *)(uintptr_t)high), 1);
}

/*
 * The 32 bytes from each lane's position, unless a lane has fewer left (STEP_NO_ROOM): one 32-byte load a lane,
 * transposed into the window's four words. Gathers took 75 cycles for the four words here (Zen 5 runs them
 * one after another), the loads and 12 shuffles about 25.
 */
AVX512_INLINE int lanes_fetch(const lane_set *s, window *w, __m512i *at)
{
    /* Each 8-byte word is big-endian: the stream's first bit is its most significant one. */
    const __m512i swap = _mm512_set4_epi64(0x08090a0b0c0d0e0f, 0x0001020304050607, 0x08090a0b0c0d0e0f,
                                           0x0001020304050607);
    const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    __m512i byte = _mm512_srli_epi64(s->pos, 3);
    if (_mm512_cmpgt_epu64_mask(byte, s->last_byte)) return STEP_NO_ROOM;
    /* The addresses moved to scalar registers by extracts: a store and eight loads back waited for the store. */
    __m512i from = _mm512_add_epi64(s->base, byte);
    __m128i q0 = _mm512_castsi512_si128(from), q1 = _mm512_extracti32x4_epi32(from, 1);
    __m128i q2 = _mm512_extracti32x4_epi32(from, 2), q3 = _mm512_extracti32x4_epi32(from, 3);
    /* lanes k and k + 4: words 0-3 of each (written out: gcc kept a loop's arrays in memory) */
    __m512i pair0 = load_pair((uint64_t)_mm_cvtsi128_si64(q0), (uint64_t)_mm_cvtsi128_si64(q2));
    __m512i pair1 = load_pair((uint64_t)_mm_extract_epi64(q0, 1), (uint64_t)_mm_extract_epi64(q2, 1));
    __m512i pair2 = load_pair((uint64_t)_mm_cvtsi128_si64(q1), (uint64_t)_mm_cvtsi128_si64(q3));
    __m512i pair3 = load_pair((uint64_t)_mm_extract_epi64(q1, 1), (uint64_t)_mm_extract_epi64(q3, 1));
    /* words 0 and 2 (low), 1 and 3 (high) of lanes 0, 1 | 4, 5 and of lanes 2, 3 | 6, 7 */
    __m512i low01 = _mm512_unpacklo_epi64(pair0, pair1), high01 = _mm512_unpackhi_epi64(pair0, pair1);
    __m512i low23 = _mm512_unpacklo_epi64(pair2, pair3), high23 = _mm512_unpackhi_epi64(pair2, pair3);
    w->word[0] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(low01, even, low23), swap);
    w->word[1] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(high01, even, high23), swap);
    w->word[2] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(low01, odd, low23), swap);
    w->word[3] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(high01, odd, high23), swap);
    *at = _mm512_and_si512(s->pos, _mm512_set1_epi64(7));
    return STEP_DONE;
}

/*
 * Eight rows (steps; one lane a qword) stored as eight runs of eight samples, run k at out[k] + done: an 8 x 8
 * transpose in 24 shuffles, written out (gcc kept a loop's arrays in memory, a third of the kernel's time).
 */
AVX512_INLINE void store_columns(const __m512i *rows, uint64_t *const *out, size_t done)
{
    const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    __m512i t0 = _mm512_unpacklo_epi64(rows[0], rows[1]), t1 = _mm512_unpackhi_epi64(rows[0], rows[1]);
    __m512i t2 = _mm512_unpacklo_epi64(rows[2], rows[3]), t3 = _mm512_unpackhi_epi64(rows[2], rows[3]);
    __m512i t4 = _mm512_unpacklo_epi64(rows[4], rows[5]), t5 = _mm512_unpackhi_epi64(rows[4], rows[5]);
    __m512i t6 = _mm512_unpacklo_epi64(rows[6], rows[7]), t7 = _mm512_unpackhi_epi64(rows[6], rows[7]);
    /* rows 0-3 of lanes 0 and 4 (v04), 2 and 6, 1 and 5, 3 and 7; then the same of rows 4-7 */
    __m512i v04 = _mm512_permutex2var_epi64(t0, even, t2), v26 = _mm512_permutex2var_epi64(t0, odd, t2);
    __m512i v15 = _mm512_permutex2var_epi64(t1, even, t3), v37 = _mm512_permutex2var_epi64(t1, odd, t3);
    __m512i w04 = _mm512_permutex2var_epi64(t4, even, t6), w26 = _mm512_permutex2var_epi64(t4, odd, t6);
    __m512i w15 = _mm512_permutex2var_epi64(t5, even, t7), w37 = _mm512_permutex2var_epi64(t5, odd, t7);
    _mm512_storeu_si512(out[0] + done, _mm512_shuffle_i64x2(v04, w04, 0x44));
    _mm512_storeu_si512(out[4] + done, _mm512_shuffle_i64x2(v04, w04, 0xee));
    _mm512_storeu_si512(out[1] + done, _mm512_shuffle_i64x2(v15, w15, 0x44));
    _mm512_storeu_si512(out[5] + done, _mm512_shuffle_i64x2(v15, w15, 0xee));
    _mm512_storeu_si512(out[2] + done, _mm512_shuffle_i64x2(v26, w26, 0x44));
    _mm512_storeu_si512(out[6] + done, _mm512_shuffle_i64x2(v26, w26, 0xee));
    _mm512_storeu_si512(out[3] + done, _mm512_shuffle_i64x2(v37, w37, 0x44));
    _mm512_storeu_si512(out[7] + done, _mm512_shuffle_i64x2(v37, w37, 0xee));
}

/* `steps` rows of samples (one lane a qword) to each lane's output, from sample `done` on. */
AVX512_INLINE void write_rows(const tsc_prom_lane *l, const __m512i *ts_rows, const __m512i *bit_rows, size_t steps,
                              size_t done)
{
    uint64_t *ts_out[8], *bits_out[8];
    for (int k = 0; k < 8; k++) {
        ts_out[k] = (uint64_t *)(void *)l[k].ts_out;
        bits_out[k] = l[k].bits_out;
    }
    if (steps == 8) {
        store_columns(ts_rows, ts_out, done);
        store_columns(bit_rows, bits_out, done);
        return;
    }
    for (size_t step = 0; step < steps; step++) {
        uint64_t ts[8], bits[8];
        _mm512_storeu_si512(ts, ts_rows[step]);
        _mm512_storeu_si512(bits, bit_rows[step]);
        for (int k = 0; k < 8; k++) {
            ts_out[k][done + step] = ts[k];
            bits_out[k][done + step] = bits[k];
        }
    }
}

/*
 * Two samples a fetch, and with two sets of eight lanes their steps interleaved: a step's chain (fetch,
 * fields, lengths, next position) is about 30 cycles, which a second set's chain overlaps. Both sets stop
 * before the same step.
 */
AVX512_INLINE size_t lanes_run(tsc_prom_lane *restrict l, int sets, size_t n, int *restrict escaped)
{
    const table16 dods = dod_table();
    lane_set a = lanes_load(l), b = sets == 2 ? lanes_load(l + 8) : a;
    size_t done = 0;
    int stop = STEP_DONE;
    while (done < n && stop == STEP_DONE) {
        __m512i rows[4][8]; /* timestamps and values of set a, then of set b */
        size_t steps = 0, want = n - done < 8 ? n - done : 8;
        while (steps < want) {
            window wa, wb = {{a.pos, a.pos, a.pos, a.pos}};
            __m512i at_a, at_b = a.pos, fields_a, fields_b = a.pos;
            stop = lanes_fetch(&a, &wa, &at_a);
            if (sets == 2 && stop == STEP_DONE) stop = lanes_fetch(&b, &wb, &at_b);
            for (int first = 1; first >= 0 && steps < want; first--) {
                if (stop == STEP_DONE) stop = lanes_fields(&wa, at_a, first, &fields_a);
                if (sets == 2 && stop == STEP_DONE) stop = lanes_fields(&wb, at_b, first, &fields_b);
                if (stop != STEP_DONE) break;
                lanes_advance(&a, &wa, &at_a, fields_a, &dods, first);
                rows[0][steps] = a.ts;
                rows[1][steps] = a.bits;
                if (sets == 2) {
                    lanes_advance(&b, &wb, &at_b, fields_b, &dods, first);
                    rows[2][steps] = b.ts;
                    rows[3][steps] = b.bits;
                }
                steps++;
            }
            if (stop != STEP_DONE) break;
        }
        write_rows(l, rows[0], rows[1], steps, done);
        if (sets == 2) write_rows(l + 8, rows[2], rows[3], steps, done);
        done += steps;
    }
    lanes_store(&a, l);
    if (sets == 2) lanes_store(&b, l + 8);
    *escaped = stop == STEP_ESCAPE;
    return done;
}

AVX512 size_t tsc_prom_lanes8_avx512(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run(lanes, 1, n, escaped);
}

AVX512 size_t tsc_prom_lanes16_avx512(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run(lanes, 2, n, escaped);
}

#else
typedef int tsc_prom_lanes_unused; /* ISO C: a translation unit declares something */
#endif
