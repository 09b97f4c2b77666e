/*
 * Codec-1 chunks decoded in the 64-bit lanes of AVX2 registers: the twin
 * of lanes512.c for CPUs without AVX-512, four chunks a set and one sample
 * of each per step; two sets side by side for eight chunks, the
 * sixteen-lane call as two calls of eight kept in step.
 *
 * The steps are lanes512.c's, with what AVX2 lacks written otherwise: the
 * dod's leading ones (vplzcntq there) from two eight-entry vpermd tables,
 * on its first three bits and, after `111`, on the next three; selects are
 * blends, masks are compares. Same bits and the same `bad` as iterator.c's
 * read_sample (the tests compare every loop choice on the same chunks).
 */
#include "lanes.h"
#include "../common/lanes512.h"
#include "../common/lanes_avx2.h"

#ifdef TSC_HAVE_AVX2
#  define AVX2 TSC_LANES4
#  define AVX2_INLINE TSC_LANES4_INLINE

/* Where each lane's streams are: fixed for a call. */
typedef struct {
    __m256i tbase, vbase, tlast, vlast;
} lane_streams;

/* The lanes' decode state, one register a field. */
typedef struct {
    __m256i tpos, vpos, delta, ts, bits, lead, width;
    __m256i bad; /* non-zero in a lane that met a field no encoder writes, or time going back */
} lane_set;

AVX2_INLINE void lanes_load(const tsc_chunk_lane *l, lane_streams *streams, lane_set *s)
{
    streams->tbase = TSC_LANE4_FIELDS(l, tbase, uintptr_t);
    streams->vbase = TSC_LANE4_FIELDS(l, vbase, uintptr_t);
    streams->tlast = TSC_LANE4_FIELDS(l, tlast, long long);
    streams->vlast = TSC_LANE4_FIELDS(l, vlast, long long);
    s->tpos = TSC_LANE4_FIELDS(l, tpos, long long);
    s->vpos = TSC_LANE4_FIELDS(l, vpos, long long);
    s->delta = TSC_LANE4_FIELDS(l, delta, long long);
    s->ts = TSC_LANE4_FIELDS(l, ts, long long);
    s->bits = TSC_LANE4_FIELDS(l, bits, long long);
    s->lead = TSC_LANE4_FIELDS(l, lead, long long);
    s->width = TSC_LANE4_FIELDS(l, width, long long);
    s->bad = _mm256_setzero_si256();
}

AVX2_INLINE void lanes_store(const lane_set *s, tsc_chunk_lane *l)
{
    __m256i clean = _mm256_cmpeq_epi64(s->bad, _mm256_setzero_si256());
    int bad = ~_mm256_movemask_pd(_mm256_castsi256_pd(clean)) & 15;
    tsc_chunk_lane_rows r;
    _mm256_storeu_si256((__m256i *)(void *)r.tpos, s->tpos);
    _mm256_storeu_si256((__m256i *)(void *)r.vpos, s->vpos);
    _mm256_storeu_si256((__m256i *)(void *)r.delta, s->delta);
    _mm256_storeu_si256((__m256i *)(void *)r.ts, s->ts);
    _mm256_storeu_si256((__m256i *)(void *)r.bits, s->bits);
    _mm256_storeu_si256((__m256i *)(void *)r.lead, s->lead);
    _mm256_storeu_si256((__m256i *)(void *)r.width, s->width);
    tsc_chunk_lanes_put(l, 4, &r, (unsigned)bad);
}

enum { STEP_DONE, STEP_ESCAPE };

/* A set's two windows, and where the next sample's fields start in each. */
typedef struct {
    tsc_lanes4_window t, v;
    __m256i tat, vat;
} windows;

/* Whether some lane's window is spent: as lanes512.c's lanes_fetch, a timestamp window after bit 191, a
 * value window after bit 178. */
AVX2_INLINE int spent(__m256i at, long long last)
{
    return _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(at, _mm256_set1_epi64x(last))));
}

AVX2_INLINE void lanes_fetch(const lane_streams *streams, const lane_set *s, windows *w)
{
    if (spent(w->tat, 191)) tsc_lanes4_fetch(streams->tbase, streams->tlast, s->tpos, &w->t, &w->tat);
    if (spent(w->vat, 178)) tsc_lanes4_fetch(streams->vbase, streams->vlast, s->vpos, &w->v, &w->vat);
}

/*
 * The dod fields' leading ones (0-4; `0`, `10`+5, `110`+8, `1110`+11, `11110`+20) from their 64 bits: those
 * of the first three bits, and after `111` those of the next three.
 * @return STEP_ESCAPE at `11111` (a 64-bit dod, left to the scalar loop), else STEP_DONE.
 */
AVX2_INLINE int lanes_dod_ones(__m256i dod_bits, __m256i *ones)
{
    /* a qword's high dword indexes entry 0, which is 0 */
    const __m256i leading_ones = _mm256_set_epi32(3, 2, 1, 1, 0, 0, 0, 0);
    __m256i first = _mm256_permutevar8x32_epi32(leading_ones, _mm256_srli_epi64(dod_bits, 61));
    __m256i next_three = _mm256_and_si256(_mm256_srli_epi64(dod_bits, 58), _mm256_set1_epi64x(7));
    __m256i more = _mm256_permutevar8x32_epi32(leading_ones, next_three);
    __m256i all_three = _mm256_cmpeq_epi64(first, _mm256_set1_epi64x(3));
    *ones = _mm256_add_epi64(first, _mm256_and_si256(all_three, more));
    __m256i escape = _mm256_cmpgt_epi64(*ones, _mm256_set1_epi64x(4));
    return _mm256_movemask_pd(_mm256_castsi256_pd(escape)) ? STEP_ESCAPE : STEP_DONE;
}

/* The timestamp of every lane's sample from its dod field (lanes_dod_ones), w->tat moved past it. */
AVX2_INLINE void lanes_timestamp(lane_set *s, windows *w, __m256i dod_bits, __m256i ones)
{
    const __m256i one = _mm256_set1_epi64x(1);
    __m256i prefix = _mm256_add_epi64(ones, one);
    __m256i payload = _mm256_permutevar8x32_epi32(_mm256_set_epi32(0, 0, 0, 20, 11, 8, 5, 0), ones);
    __m256i sign = _mm256_srli_epi64(_mm256_sllv_epi64(one, payload), 1);
    /* ((win << prefix) >> (63 - payload)) >> 1: the payload, 0 for `0` */
    __m256i raw = _mm256_srlv_epi64(_mm256_sllv_epi64(dod_bits, prefix),
                                    _mm256_sub_epi64(_mm256_set1_epi64x(63), payload));
    __m256i dod = _mm256_sub_epi64(_mm256_xor_si256(_mm256_srli_epi64(raw, 1), sign), sign);
    __m256i used = _mm256_add_epi64(prefix, payload);
    w->tat = _mm256_add_epi64(w->tat, used);
    s->tpos = _mm256_add_epi64(s->tpos, used);
    s->delta = _mm256_add_epi64(s->delta, dod);
    __m256i next = _mm256_add_epi64(s->ts, s->delta);
    s->bad = _mm256_or_si256(s->bad, _mm256_and_si256(_mm256_cmpgt_epi64(s->ts, next), one)); /* time back */
    s->ts = next;
}

/* The value of every lane's sample: `0`, `10` + window bits, `11` + 5-bit lead + 6-bit (width - 1) + width bits. */
AVX2_INLINE void lanes_value(lane_set *s, windows *w)
{
    const __m256i one = _mm256_set1_epi64x(1), sixty_four = _mm256_set1_epi64x(64);
    __m256i head = tsc_lanes4_window_bits(&w->v, w->vat);
    __m256i kind = _mm256_srli_epi64(head, 62), changed01 = _mm256_srli_epi64(kind, 1);
    __m256i changed = tsc_lanes4_all_if(changed01);
    __m256i fresh = tsc_lanes4_all_if(_mm256_and_si256(changed01, kind));
    __m256i control = _mm256_add_epi64(one, changed01); /* bits before the meaningful ones: 1, 2 or 13 */
    control = _mm256_add_epi64(control, _mm256_and_si256(fresh, _mm256_set1_epi64x(11)));
    __m256i width = _mm256_add_epi64(_mm256_and_si256(_mm256_srli_epi64(head, 51), _mm256_set1_epi64x(63)), one);
    s->width = tsc_lanes4_select(fresh, width, s->width);
    __m256i lead = _mm256_and_si256(_mm256_srli_epi64(head, 57), _mm256_set1_epi64x(31));
    s->lead = tsc_lanes4_select(fresh, lead, s->lead);
    __m256i end = _mm256_add_epi64(s->lead, s->width);
    /* lead + width - 1 > 63 (wrapping: width 0, no window yet, too): its bits above the sixth */
    s->bad = _mm256_or_si256(s->bad, _mm256_and_si256(changed, _mm256_srli_epi64(_mm256_sub_epi64(end, one), 6)));
    __m256i meaningful_at = _mm256_add_epi64(w->vat, control);
    __m256i next = _mm256_add_epi64(meaningful_at, _mm256_and_si256(changed, s->width));
    s->vpos = _mm256_add_epi64(s->vpos, _mm256_sub_epi64(next, w->vat));
    w->vat = next;
    __m256i meaningful = _mm256_srlv_epi64(tsc_lanes4_window_bits(&w->v, meaningful_at),
                                           _mm256_sub_epi64(sixty_four, s->width));
    __m256i shift = _mm256_and_si256(_mm256_sub_epi64(sixty_four, end), _mm256_set1_epi64x(63));
    s->bits = _mm256_xor_si256(s->bits, _mm256_and_si256(changed, _mm256_sllv_epi64(meaningful, shift)));
}

/* Two sets of four lanes, their steps interleaved, each stream fetched again when a window is spent. Both
 * sets stop before the same step: the dods' escapes are checked for both before either set moves. */
AVX2_INLINE size_t lanes_run2(tsc_chunk_lane *restrict l, size_t n, int *restrict escaped)
{
    lane_streams streams_a, streams_b;
    lane_set a, b;
    lanes_load(l, &streams_a, &a);
    lanes_load(l + 4, &streams_b, &b);
    uint64_t *ts_out[8], *bits_out[8];
    TSC_LANE_OUTPUTS(l, 8, ts_out, bits_out);
    size_t done = 0;
    int stop = STEP_DONE;
    windows wa, wb;
    wa.tat = wa.vat = _mm256_set1_epi64x(256); /* spent: the first step fetches */
    wb = wa;
    while (done < n && stop == STEP_DONE) {
        __m256i rows[4][4]; /* timestamps and values of set a, then of set b */
        size_t steps = 0, want = n - done < 4 ? n - done : 4;
        for (; steps < want; steps++) {
            __m256i dod_a, dod_b, ones_a, ones_b;
            lanes_fetch(&streams_a, &a, &wa);
            lanes_fetch(&streams_b, &b, &wb);
            dod_a = tsc_lanes4_window_bits(&wa.t, wa.tat);
            dod_b = tsc_lanes4_window_bits(&wb.t, wb.tat);
            if ((stop = lanes_dod_ones(dod_a, &ones_a)) != STEP_DONE) break;
            if ((stop = lanes_dod_ones(dod_b, &ones_b)) != STEP_DONE) break;
            lanes_timestamp(&a, &wa, dod_a, ones_a);
            lanes_value(&a, &wa);
            lanes_timestamp(&b, &wb, dod_b, ones_b);
            lanes_value(&b, &wb);
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

AVX2 size_t tsc_chunk_lanes8_avx2(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run2(lanes, n, escaped);
}

/* The eight-lane kernel as tsc_lanes16_as_two calls it (its copy holds lane structs of up to 128 bytes). */
_Static_assert(sizeof(tsc_chunk_lane) <= 128, "tsc_lanes16_as_two's copy");
static size_t run8(void *lanes, size_t n, int *escaped) { return tsc_chunk_lanes8_avx2(lanes, n, escaped); }

AVX2 size_t tsc_chunk_lanes16_avx2(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return tsc_lanes16_as_two(lanes, sizeof *lanes, run8, n, escaped);
}

#else
typedef int tsc_chunk_lanes_avx2_unused; /* ISO C: a translation unit declares something */
#endif
