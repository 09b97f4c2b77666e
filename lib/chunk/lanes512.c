/*
 * Codec-1 chunks decoded in the 64-bit lanes of AVX-512 registers, eight
 * chunks a set and one sample of each per step; two sets side by side for
 * sixteen chunks (tschunk_decode_chunks). The Prometheus kernel's scheme
 * (lib/prom/lanes512.c) with codec 1's two streams: each lane fetches 32
 * bytes of its timestamp stream and 32 of its value stream at their
 * positions, again for each stream only when some lane's window is spent
 * (a dod takes at most 25 bits without the 64-bit escape, an XOR field 77;
 * lanes_fetch). A constant stream,
 * elided from the chunk, is read from tsc_chunk_lane_zeros: a `0` field a
 * step, which is what it means (dod 0, value unchanged). A 64-bit dod stops
 * the kernel before that step; iterator.c takes that step of every lane with
 * the scalar loop.
 *
 * The steps give the bits of iterator.c's read_sample (the tests and
 * fuzz_chunk_decode compare every loop choice on the same chunks), and set
 * `bad` where it does: a window of lead + width - 1 > 63 (before any window,
 * width 0), time going back.
 */
#include "lanes.h"
#include "../common/lanes512.h"

#ifdef TSC_HAVE_AVX2
const uint8_t tsc_chunk_lane_zeros[TSC_CHUNK_LANE_ZEROS];

#  define AVX512 TSC_LANES
#  define AVX512_INLINE TSC_LANES_INLINE

/* The lanes' state, one register a field. */
typedef struct {
    __m512i tbase, vbase, tlast, vlast, tpos, vpos, delta, ts, bits, lead, width;
    __m512i bad; /* non-zero in a lane that met a field no encoder writes, or time going back */
} lane_set;

AVX512_INLINE lane_set lanes_load(const tsc_chunk_lane *l)
{
    lane_set s;
    s.tbase = TSC_LANE_FIELDS(l, tbase, uintptr_t);
    s.vbase = TSC_LANE_FIELDS(l, vbase, uintptr_t);
    s.tlast = TSC_LANE_FIELDS(l, tlast, long long);
    s.vlast = TSC_LANE_FIELDS(l, vlast, long long);
    s.tpos = TSC_LANE_FIELDS(l, tpos, long long);
    s.vpos = TSC_LANE_FIELDS(l, vpos, long long);
    s.delta = TSC_LANE_FIELDS(l, delta, long long);
    s.ts = TSC_LANE_FIELDS(l, ts, long long);
    s.bits = TSC_LANE_FIELDS(l, bits, long long);
    s.lead = TSC_LANE_FIELDS(l, lead, long long);
    s.width = TSC_LANE_FIELDS(l, width, long long);
    s.bad = _mm512_setzero_si512();
    return s;
}

AVX512_INLINE void lanes_store(const lane_set *s, tsc_chunk_lane *l)
{
    __mmask8 bad = _mm512_test_epi64_mask(s->bad, s->bad);
    tsc_chunk_lane_rows r;
    _mm512_storeu_si512(r.tpos, s->tpos);
    _mm512_storeu_si512(r.vpos, s->vpos);
    _mm512_storeu_si512(r.delta, s->delta);
    _mm512_storeu_si512(r.ts, s->ts);
    _mm512_storeu_si512(r.bits, s->bits);
    _mm512_storeu_si512(r.lead, s->lead);
    _mm512_storeu_si512(r.width, s->width);
    tsc_chunk_lanes_put(l, 8, &r, bad);
}

enum { STEP_DONE, STEP_ESCAPE };

/* A set's two windows, and where the next sample's fields start in each. */
typedef struct {
    tsc_lanes_window t, v;
    __m512i tat, vat;
} windows;

/*
 * The next 32 bytes of a stream of every lane where some lane's window is spent: tsc_lanes_window_bits reads
 * 64 bits from bit 191 at most, so a timestamp window after bit 191 (a dod field takes up to 25 bits, read
 * as the 64 from its start) and a value window after bit 178 (an XOR field's 13-bit head, then its
 * meaningful bits read as the 64 from there). Two to thirty samples a fetch.
 */
AVX512_INLINE void lanes_fetch(const lane_set *s, windows *w)
{
    if (_mm512_cmpgt_epi64_mask(w->tat, _mm512_set1_epi64(191)))
        tsc_lanes_fetch(s->tbase, s->tlast, s->tpos, &w->t, &w->tat);
    if (_mm512_cmpgt_epi64_mask(w->vat, _mm512_set1_epi64(178)))
        tsc_lanes_fetch(s->vbase, s->vlast, s->vpos, &w->v, &w->vat);
}

/* The 64 bits at a set's next dod fields. */
AVX512_INLINE __m512i dod_fields(const windows *w) { return tsc_lanes_window_bits(&w->t, w->tat); }

/*
 * The dod fields' leading ones (0-4; `0`, `10`+5, `110`+8, `1110`+11, `11110`+20) from their 64 bits.
 * @return STEP_ESCAPE at `11111` (a 64-bit dod, left to the scalar loop), else STEP_DONE.
 */
AVX512_INLINE int lanes_dod_ones(__m512i dod_bits, __m512i *fields, __m512i *ones)
{
    *fields = dod_bits;
    /* bit 58 set: at most five ones are counted */
    __m512i inverted = _mm512_or_si512(_mm512_xor_si512(dod_bits, _mm512_set1_epi64(-1)),
                                       _mm512_set1_epi64(INT64_C(1) << 58));
    *ones = _mm512_lzcnt_epi64(inverted);
    return _mm512_cmpeq_epi64_mask(*ones, _mm512_set1_epi64(5)) ? STEP_ESCAPE : STEP_DONE;
}

/* The timestamp of every lane's sample from its dod field (lanes_dod_ones), w->tat moved past it. */
AVX512_INLINE void lanes_timestamp(lane_set *s, windows *w, __m512i dod_bits, __m512i ones)
{
    const __m512i one = _mm512_set1_epi64(1);
    __m512i prefix = _mm512_add_epi64(ones, one);
    __m512i payload = _mm512_permutexvar_epi64(ones, _mm512_set_epi64(0, 0, 0, 20, 11, 8, 5, 0));
    __m512i sign = _mm512_srli_epi64(_mm512_sllv_epi64(one, payload), 1);
    /* ((win << prefix) >> (63 - payload)) >> 1: the payload, 0 for `0` */
    __m512i raw = _mm512_srlv_epi64(_mm512_sllv_epi64(dod_bits, prefix),
                                    _mm512_sub_epi64(_mm512_set1_epi64(63), payload));
    __m512i dod = _mm512_sub_epi64(_mm512_xor_si512(_mm512_srli_epi64(raw, 1), sign), sign);
    __m512i used = _mm512_add_epi64(prefix, payload);
    w->tat = _mm512_add_epi64(w->tat, used);
    s->tpos = _mm512_add_epi64(s->tpos, used);
    s->delta = _mm512_add_epi64(s->delta, dod);
    __m512i next = _mm512_add_epi64(s->ts, s->delta);
    __mmask8 back = _mm512_cmplt_epi64_mask(next, s->ts);
    s->bad = _mm512_mask_mov_epi64(s->bad, back, one);
    s->ts = next;
}

/* The value of every lane's sample: `0`, `10` + window bits, `11` + 5-bit lead + 6-bit (width - 1) + width bits. */
AVX512_INLINE void lanes_value(lane_set *s, windows *w)
{
    const __m512i one = _mm512_set1_epi64(1), sixty_four = _mm512_set1_epi64(64);
    __m512i head = tsc_lanes_window_bits(&w->v, w->vat);
    __m512i kind = _mm512_srli_epi64(head, 62), changed01 = _mm512_srli_epi64(kind, 1);
    __m512i changed = tsc_lanes_all_if(changed01), fresh = tsc_lanes_all_if(_mm512_and_si512(changed01, kind));
    __m512i control = _mm512_add_epi64(one, changed01); /* bits before the meaningful ones: 1, 2 or 13 */
    control = _mm512_add_epi64(control, _mm512_and_si512(fresh, _mm512_set1_epi64(11)));
    __m512i width = _mm512_add_epi64(_mm512_and_si512(_mm512_srli_epi64(head, 51), _mm512_set1_epi64(63)), one);
    s->width = tsc_lanes_select(fresh, width, s->width);
    __m512i lead = _mm512_and_si512(_mm512_srli_epi64(head, 57), _mm512_set1_epi64(31));
    s->lead = tsc_lanes_select(fresh, lead, s->lead);
    __m512i end = _mm512_add_epi64(s->lead, s->width);
    /* lead + width - 1 > 63 (wrapping: width 0, no window yet, too): its bits above the sixth */
    s->bad = _mm512_or_si512(s->bad, _mm512_and_si512(changed, _mm512_srli_epi64(_mm512_sub_epi64(end, one), 6)));
    __m512i meaningful_at = _mm512_add_epi64(w->vat, control);
    __m512i next = _mm512_add_epi64(meaningful_at, _mm512_and_si512(changed, s->width));
    s->vpos = _mm512_add_epi64(s->vpos, _mm512_sub_epi64(next, w->vat));
    w->vat = next;
    __m512i meaningful = _mm512_srlv_epi64(tsc_lanes_window_bits(&w->v, meaningful_at),
                                           _mm512_sub_epi64(sixty_four, s->width));
    __m512i shift = _mm512_and_si512(_mm512_sub_epi64(sixty_four, end), _mm512_set1_epi64(63));
    s->bits = _mm512_xor_si512(s->bits, _mm512_and_si512(changed, _mm512_sllv_epi64(meaningful, shift)));
}

/*
 * With two sets of eight lanes their steps interleaved, each stream fetched again when a window is spent
 * (lanes_fetch). Both sets stop before the same step: the dods' escapes are checked for both before either
 * set moves.
 */
AVX512_INLINE size_t lanes_run(tsc_chunk_lane *restrict l, int sets, size_t n, int *restrict escaped)
{
    lane_set a = lanes_load(l), b = sets == 2 ? lanes_load(l + 8) : a;
    uint64_t *ts_out[16], *bits_out[16];
    TSC_LANE_OUTPUTS(l, 8 * sets, ts_out, bits_out);
    tsc_lane_stage stage;
    tsc_lane_stage_init(&stage, 8 * sets);
    int staging = tsc_lane_outputs_crowded(ts_out, bits_out, 8 * sets);
    uint64_t **ts_rows = staging ? stage.ts_row : ts_out, **bits_rows = staging ? stage.bits_row : bits_out;
    size_t done = 0, staged = 0;
    int stop = STEP_DONE;
    windows wa, wb;
    wa.tat = wa.vat = _mm512_set1_epi64(256); /* spent: the first step fetches */
    wb = wa;
    while (done < n && stop == STEP_DONE) {
        __m512i rows[4][8]; /* timestamps and values of set a, then of set b */
        size_t steps = 0, want = n - done < 8 ? n - done : 8;
        for (; steps < want; steps++) {
            __m512i dod_a = a.tpos, dod_b = a.tpos, ones_a = a.tpos, ones_b = a.tpos;
            lanes_fetch(&a, &wa);
            if (sets == 2) lanes_fetch(&b, &wb);
            if ((stop = lanes_dod_ones(dod_fields(&wa), &dod_a, &ones_a)) != STEP_DONE) break;
            if (sets == 2 && (stop = lanes_dod_ones(dod_fields(&wb), &dod_b, &ones_b)) != STEP_DONE) break;
            lanes_timestamp(&a, &wa, dod_a, ones_a);
            lanes_value(&a, &wa);
            rows[0][steps] = a.ts;
            rows[1][steps] = a.bits;
            if (sets == 2) {
                lanes_timestamp(&b, &wb, dod_b, ones_b);
                lanes_value(&b, &wb);
                rows[2][steps] = b.ts;
                rows[3][steps] = b.bits;
            }
        }
        size_t at = staging ? staged : done;
        tsc_lanes_write_rows(ts_rows, bits_rows, rows[0], rows[1], steps, at);
        if (sets == 2) tsc_lanes_write_rows(ts_rows + 8, bits_rows + 8, rows[2], rows[3], steps, at);
        done += steps;
        staged += steps;
        if (staging && (staged == TSC_LANE_STAGE_STEPS || done == n || stop != STEP_DONE)) {
            tsc_lane_stage_flush(&stage, 8 * sets, ts_out, bits_out, done - staged, staged);
            staged = 0;
        }
    }
    lanes_store(&a, l);
    if (sets == 2) lanes_store(&b, l + 8);
    TSC_LANE_ADVANCE(l, 8 * sets, done);
    *escaped = stop == STEP_ESCAPE;
    return done;
}

AVX512 size_t tsc_chunk_lanes8_avx512(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run(lanes, 1, n, escaped);
}

AVX512 size_t tsc_chunk_lanes16_avx512(tsc_chunk_lane *restrict lanes, size_t n, int *restrict escaped)
{
    return lanes_run(lanes, 2, n, escaped);
}

#else
typedef int tsc_chunk_lanes_unused; /* ISO C: a translation unit declares something */
#endif
