/*
 * Prometheus XOR chunks decoded in the 64-bit lanes of AVX2 registers: the
 * twin of lanes512.c for CPUs without AVX-512, four chunks a set and one
 * sample of each per step; two sets side by side for eight chunks, and the
 * sixteen-lane call as two calls of eight kept in step.
 *
 * The steps are lanes512.c's, with what AVX2 lacks written otherwise: the
 * dod's length and payload bits come from an eight-entry table indexed by
 * its first three bits (vpermd; `1111`, the 64-bit escape, stops the kernel
 * before that step as there), selects are blends, masks are compares.
 * Same bits as decoder.c's read_sample (the tests compare every loop choice
 * on the same chunks); a window with lead + width > 64 sets `bad`.
 */
#include "decoder.h"
#include "../common/lanes512.h"
#include "../common/lanes_avx2.h"

#ifdef TSC_HAVE_AVX2
#  define AVX2 TSC_LANES4
#  define AVX2_INLINE TSC_LANES4_INLINE

/*
 * The dod field by its first three bits: `0` (0-3), `10`+14 (4, 5), `110`+17 (6), `1110`+20 (7; `1111` is the
 * escape). A dword a key: the field's length (low byte) and payload bits (second byte).
 */
AVX2_INLINE __m256i dod_table(void)
{
    return _mm256_set_epi32(24 | 20 << 8, 20 | 17 << 8, 16 | 14 << 8, 16 | 14 << 8, 1, 1, 1, 1);
}

/* Where each lane's stream is: fixed for a call. */
typedef struct {
    __m256i base, last_byte;
} lane_streams;

/* The lanes' decode state, one register a field. */
typedef struct {
    __m256i pos, delta, ts, bits, lead, width;
    __m256i bad; /* sign bit: a window with lead + width > 64 */
} lane_set;

AVX2_INLINE void lanes_load(const tsc_prom_lane *l, lane_streams *streams, lane_set *s)
{
    streams->base = TSC_LANE4_FIELDS(l, base, uintptr_t);
    streams->last_byte = TSC_LANE4_FIELDS(l, last_byte, long long);
    s->pos = TSC_LANE4_FIELDS(l, pos, long long);
    s->delta = TSC_LANE4_FIELDS(l, delta, long long);
    s->ts = TSC_LANE4_FIELDS(l, ts, long long);
    s->bits = TSC_LANE4_FIELDS(l, bits, long long);
    s->lead = TSC_LANE4_FIELDS(l, lead, long long);
    s->width = TSC_LANE4_FIELDS(l, width, long long);
    s->bad = _mm256_setzero_si256();
}

AVX2_INLINE void lanes_store(const lane_set *s, tsc_prom_lane *l)
{
    int bad = _mm256_movemask_pd(_mm256_castsi256_pd(s->bad));
    tsc_prom_lane_rows r;
    _mm256_storeu_si256((__m256i *)(void *)r.pos, s->pos);
    _mm256_storeu_si256((__m256i *)(void *)r.delta, s->delta);
    _mm256_storeu_si256((__m256i *)(void *)r.ts, s->ts);
    _mm256_storeu_si256((__m256i *)(void *)r.bits, s->bits);
    _mm256_storeu_si256((__m256i *)(void *)r.lead, s->lead);
    _mm256_storeu_si256((__m256i *)(void *)r.width, s->width);
    tsc_prom_lanes_put(l, 4, &r, (unsigned)bad);
}

enum { STEP_DONE, STEP_ESCAPE };

/* The 64 bits at `at`: a sample's dod and XOR head.
 * @return STEP_ESCAPE at a 64-bit dod (the sample is left to the scalar loop), else STEP_DONE. */
AVX2_INLINE int lanes_fields(const tsc_lanes4_window *w, __m256i at, __m256i *fields)
{
    *fields = tsc_lanes4_window_bits(w, at);
    __m256i escape = _mm256_cmpeq_epi64(_mm256_srli_epi64(*fields, 60), _mm256_set1_epi64x(15));
    return _mm256_movemask_pd(_mm256_castsi256_pd(escape)) ? STEP_ESCAPE : STEP_DONE;
}

/* One sample of every lane from its fields (lanes_fields), *at moved past it. */
AVX2_INLINE void lanes_advance(lane_set *s, const tsc_lanes4_window *w, __m256i *at, __m256i fields, __m256i dods)
{
    const __m256i sixty_four = _mm256_set1_epi64x(64), one = _mm256_set1_epi64x(1);
    /* The key in each qword's low dword; its high dword (0) picks entry 0, which the masks below drop. */
    __m256i entry = _mm256_permutevar8x32_epi32(dods, _mm256_srli_epi64(fields, 61));
    __m256i total = _mm256_and_si256(entry, _mm256_set1_epi64x(0xff));
    /* As decoder.c: an n-bit payload v is ((v + b) mod 2^n) - b with b = 2^(n-1) - 1 (n = 0: 0). */
    __m256i payload_bits = _mm256_srli_epi32(entry, 8); /* the high dword's 1 shifts out */
    __m256i mask = _mm256_sub_epi64(_mm256_sllv_epi64(one, payload_bits), one);
    __m256i bias = _mm256_srli_epi64(mask, 1);
    __m256i dod = _mm256_add_epi64(_mm256_srlv_epi64(fields, _mm256_sub_epi64(sixty_four, total)), bias);
    dod = _mm256_sub_epi64(_mm256_and_si256(dod, mask), bias);
    /* The XOR field, within the same 64 bits (a dod takes <= 24, the field's head 13): `0`, `10` + window
     * bits, `11` + 5-bit lead + 6-bit width (0 is 64) + width bits. */
    __m256i head = _mm256_sllv_epi64(fields, total);
    __m256i kind = _mm256_srli_epi64(head, 62), changed01 = _mm256_srli_epi64(kind, 1);
    __m256i changed = tsc_lanes4_all_if(changed01);
    __m256i fresh = tsc_lanes4_all_if(_mm256_and_si256(changed01, kind));
    __m256i control = _mm256_add_epi64(one, changed01); /* bits before the meaningful ones: 1, 2 or 13 */
    control = _mm256_add_epi64(control, _mm256_and_si256(fresh, _mm256_set1_epi64x(11)));
    __m256i width = _mm256_and_si256(_mm256_srli_epi64(head, 51), _mm256_set1_epi64x(63));
    width = _mm256_add_epi64(_mm256_and_si256(_mm256_sub_epi64(width, one), _mm256_set1_epi64x(63)), one); /* 0: 64 */
    s->width = tsc_lanes4_select(fresh, width, s->width);
    __m256i lead = _mm256_and_si256(_mm256_srli_epi64(head, 57), _mm256_set1_epi64x(31));
    s->lead = tsc_lanes4_select(fresh, lead, s->lead);
    __m256i end = _mm256_add_epi64(s->lead, s->width);
    s->bad = _mm256_or_si256(s->bad, _mm256_and_si256(fresh, _mm256_sub_epi64(sixty_four, end))); /* sign: > 64 */
    __m256i meaningful_at = _mm256_add_epi64(_mm256_add_epi64(*at, total), control);
    __m256i next = _mm256_add_epi64(meaningful_at, _mm256_and_si256(changed, s->width));
    s->pos = _mm256_add_epi64(s->pos, _mm256_sub_epi64(next, *at));
    *at = next;
    __m256i raw = tsc_lanes4_window_bits(w, meaningful_at);
    __m256i meaningful = _mm256_srlv_epi64(raw, _mm256_sub_epi64(sixty_four, s->width));
    /* sllv gives 0 for a count above 63: only a bad window's (lead + width > 64) */
    __m256i x = _mm256_and_si256(changed, _mm256_sllv_epi64(meaningful, _mm256_sub_epi64(sixty_four, end)));
    s->bits = _mm256_xor_si256(s->bits, x);
    s->delta = _mm256_add_epi64(s->delta, dod);
    s->ts = _mm256_add_epi64(s->ts, s->delta);
}

/* Whether some lane's next sample may reach past its window: one starting after bit 154 may not (a dod
 * and an XOR head take up to 24 + 13 bits, and the meaningful bits are read as the 64 from there, which
 * tsc_lanes4_window_bits takes from bit 191 at most). */
AVX2_INLINE int window_spent(__m256i at)
{
    return _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(at, _mm256_set1_epi64x(154))));
}

/* The two sets' steps interleaved, so that one set's chain overlaps the other's; a set fetches again only
 * when a lane's window is spent. Both sets stop before the same step. */
AVX2_INLINE size_t lanes_run2(tsc_prom_lane *restrict l, size_t n, int *restrict escaped)
{
    const __m256i dods = dod_table();
    lane_streams streams_a, streams_b;
    lane_set a, b;
    lanes_load(l, &streams_a, &a);
    lanes_load(l + 4, &streams_b, &b);
    uint64_t *ts_out[8], *bits_out[8];
    TSC_LANE_OUTPUTS(l, 8, ts_out, bits_out);
    size_t done = 0;
    int stop = STEP_DONE;
    tsc_lanes4_window wa, wb;
    __m256i at_a = _mm256_set1_epi64x(256), at_b = at_a;
    while (done < n && stop == STEP_DONE) {
        __m256i rows[4][4]; /* timestamps and values of set a, then of set b */
        size_t steps = 0, want = n - done < 4 ? n - done : 4;
        for (; steps < want; steps++) {
            __m256i fields_a, fields_b;
            if (window_spent(at_a)) tsc_lanes4_fetch(streams_a.base, streams_a.last_byte, a.pos, &wa, &at_a);
            if (window_spent(at_b)) tsc_lanes4_fetch(streams_b.base, streams_b.last_byte, b.pos, &wb, &at_b);
            if ((stop = lanes_fields(&wa, at_a, &fields_a)) != STEP_DONE) break;
            if ((stop = lanes_fields(&wb, at_b, &fields_b)) != STEP_DONE) break;
            lanes_advance(&a, &wa, &at_a, fields_a, dods);
            lanes_advance(&b, &wb, &at_b, fields_b, dods);
            rows[0][steps] = a.ts;
            rows[1][steps] = a.bits;
            rows[2][steps] = b.ts;
            rows[3][steps] = b.bits;
        }
        tsc_lanes4_write_rows(ts_out, bits_out, rows[0], rows[1], steps, done);
        tsc_lanes4_write_rows(ts_out + 4, bits_out + 4, rows[2], rows[3], steps, done);
        done += steps;
    }
    lanes_store(&a, l);
    lanes_store(&b, l + 4);
    TSC_LANE_ADVANCE(l, 8, done);
    *escaped = stop == STEP_ESCAPE;
    return done;
}

AVX2 size_t tsc_prom_lanes8_avx2(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run2(lanes, n, escaped);
}

/* The eight-lane kernel as tsc_lanes16_as_two calls it (its copy holds lane structs of up to 128 bytes). */
_Static_assert(sizeof(tsc_prom_lane) <= 128, "tsc_lanes16_as_two's copy");
static size_t run8(void *lanes, size_t n, int *escaped) { return tsc_prom_lanes8_avx2(lanes, n, escaped); }

AVX2 size_t tsc_prom_lanes16_avx2(tsc_prom_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return tsc_lanes16_as_two(lanes, sizeof *lanes, run8, n, escaped);
}

#else
typedef int tsc_prom_lanes_avx2_unused; /* ISO C: a translation unit declares something */
#endif
