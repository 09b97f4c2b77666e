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
 * 101 bits (dod, XOR control and window, meaningful bits): a fetch serves the
 * samples that start by its bit 154 (window_spent), two of the longest, nine
 * of a jittered constant's (a fetch is about 30 cycles of the chain). A 64-bit
 * dod (the `1111` escape) stops the kernel before that step: decoder.c takes
 * that step of every lane with the scalar loop and calls it again.
 *
 * The steps give the bits of decoder.c's read_sample (the tests and
 * fuzz_prom_decode compare every loop choice on the same chunks); a window
 * with lead + width > 64 sets `bad`, as there, and its values are then
 * unspecified (the decode reports CORRUPT).
 */
#include "decoder.h"
#include "../common/lanes512.h"

#ifdef TSC_HAVE_AVX2
#  define AVX512 TSC_LANES
#  define AVX512_INLINE TSC_LANES_INLINE

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

AVX512_INLINE lane_set lanes_load(const tsc_prom_lane *l)
{
    lane_set s;
    s.base = TSC_LANE_FIELDS(l, base, uintptr_t);
    s.pos = TSC_LANE_FIELDS(l, pos, long long);
    s.delta = TSC_LANE_FIELDS(l, delta, long long);
    s.ts = TSC_LANE_FIELDS(l, ts, long long);
    s.bits = TSC_LANE_FIELDS(l, bits, long long);
    s.lead = TSC_LANE_FIELDS(l, lead, long long);
    s.width = TSC_LANE_FIELDS(l, width, long long);
    s.last_byte = TSC_LANE_FIELDS(l, last_byte, long long);
    s.bad = _mm512_setzero_si512();
    return s;
}

AVX512_INLINE void lanes_store(const lane_set *s, tsc_prom_lane *l)
{
    __mmask8 bad = _mm512_cmplt_epi64_mask(s->bad, _mm512_setzero_si512());
    tsc_prom_lane_rows r;
    _mm512_storeu_si512(r.pos, s->pos);
    _mm512_storeu_si512(r.delta, s->delta);
    _mm512_storeu_si512(r.ts, s->ts);
    _mm512_storeu_si512(r.bits, s->bits);
    _mm512_storeu_si512(r.lead, s->lead);
    _mm512_storeu_si512(r.width, s->width);
    tsc_prom_lanes_put(l, 8, &r, bad);
}

enum { STEP_DONE, STEP_ESCAPE };

/* The 64 bits at `at`: a sample's dod and XOR head (first: `at` < 64, the first two words hold the sample).
 * @return STEP_ESCAPE at a 64-bit dod (the sample is left to the scalar loop), else STEP_DONE. */
AVX512_INLINE int lanes_fields(const tsc_lanes_window *w, __m512i at, int first, __m512i *fields)
{
    *fields = first ? tsc_lanes_bits_at(w->word[0], w->word[1], at) : tsc_lanes_window_bits(w, at);
    return _mm512_cmpeq_epi64_mask(_mm512_srli_epi64(*fields, 60), _mm512_set1_epi64(15)) ? STEP_ESCAPE : STEP_DONE;
}

/* One sample of every lane from its fields (lanes_fields), *at moved past it. */
AVX512_INLINE void lanes_advance(lane_set *s, const tsc_lanes_window *w, __m512i *at, __m512i fields,
                                  const table16 *dods, int first)
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
    __m512i changed = tsc_lanes_all_if(changed01), fresh = tsc_lanes_all_if(_mm512_and_si512(changed01, kind));
    __m512i control = _mm512_add_epi64(one, changed01); /* bits before the meaningful ones: 1, 2 or 13 */
    control = _mm512_add_epi64(control, _mm512_and_si512(fresh, _mm512_set1_epi64(11)));
    __m512i width = _mm512_and_si512(_mm512_srli_epi64(head, 51), _mm512_set1_epi64(63));
    width = _mm512_add_epi64(_mm512_and_si512(_mm512_sub_epi64(width, one), _mm512_set1_epi64(63)), one); /* 0 is 64 */
    s->width = tsc_lanes_select(fresh, width, s->width);
    __m512i lead = _mm512_and_si512(_mm512_srli_epi64(head, 57), _mm512_set1_epi64(31));
    s->lead = tsc_lanes_select(fresh, lead, s->lead);
    __m512i end = _mm512_add_epi64(s->lead, s->width);
    s->bad = _mm512_or_si512(s->bad, _mm512_and_si512(fresh, _mm512_sub_epi64(sixty_four, end))); /* sign: end > 64 */
    __m512i meaningful_at = _mm512_add_epi64(_mm512_add_epi64(*at, total), control);
    __m512i next = _mm512_add_epi64(meaningful_at, _mm512_and_si512(changed, s->width));
    s->pos = _mm512_add_epi64(s->pos, _mm512_sub_epi64(next, *at));
    *at = next;
    __m512i raw = first ? tsc_lanes_bits_at(w->word[0], w->word[1], meaningful_at)
                        : tsc_lanes_window_bits(w, meaningful_at);
    __m512i meaningful = _mm512_srlv_epi64(raw, _mm512_sub_epi64(sixty_four, s->width));
    /* sllv gives 0 for a count above 63: only a bad window's (lead + width > 64) */
    __m512i x = _mm512_and_si512(changed, _mm512_sllv_epi64(meaningful, _mm512_sub_epi64(sixty_four, end)));
    s->bits = _mm512_xor_si512(s->bits, x);
    s->delta = _mm512_add_epi64(s->delta, dod);
    s->ts = _mm512_add_epi64(s->ts, s->delta);
}

/* Whether some lane's next sample may reach past its window: one starting after bit 154 may not (a dod
 * and an XOR head take up to 24 + 13 bits, and the meaningful bits are read as the 64 from there, which
 * tsc_lanes_window_bits takes from bit 191 at most). */
AVX512_INLINE int window_spent(__m512i at) { return _mm512_cmpgt_epi64_mask(at, _mm512_set1_epi64(154)) != 0; }

/* A step of set a and of set b (when sets is 2), their samples into row `step`. first: every lane of both
 * fetched just before it (so two words hold its sample). @return STEP_ESCAPE before a 64-bit dod. */
AVX512_INLINE int lanes_step(lane_set *a, lane_set *b, tsc_lanes_window *wa, tsc_lanes_window *wb, __m512i *at_a,
                             __m512i *at_b, int sets, const table16 *dods, int first, __m512i (*rows)[8], size_t step)
{
    __m512i fields_a, fields_b = *at_b;
    if (lanes_fields(wa, *at_a, first, &fields_a) != STEP_DONE) return STEP_ESCAPE;
    if (sets == 2 && lanes_fields(wb, *at_b, first, &fields_b) != STEP_DONE) return STEP_ESCAPE;
    lanes_advance(a, wa, at_a, fields_a, dods, first);
    rows[0][step] = a->ts;
    rows[1][step] = a->bits;
    if (sets == 2) {
        lanes_advance(b, wb, at_b, fields_b, dods, first);
        rows[2][step] = b->ts;
        rows[3][step] = b->bits;
    }
    return STEP_DONE;
}

/*
 * With two sets of eight lanes their steps interleaved: a step's chain (fetch, fields, lengths, next
 * position) is long, and a second set's chain overlaps it. A set fetches again only when a lane's window
 * is spent: two to nine steps a fetch; a step right after both sets fetched reads its fields from the first
 * two words (fewer instructions on the chain). Both sets stop before the same step.
 */
AVX512_INLINE size_t lanes_run(tsc_prom_lane *restrict l, int sets, size_t n, int *restrict escaped)
{
    const table16 dods = dod_table();
    lane_set a = lanes_load(l), b = sets == 2 ? lanes_load(l + 8) : a;
    uint64_t *ts_out[16], *bits_out[16];
    TSC_LANE_OUTPUTS(l, 8 * sets, ts_out, bits_out);
    tsc_lane_stage stage;
    tsc_lane_stage_init(&stage, 8 * sets);
    int staging = tsc_lane_outputs_crowded(ts_out, bits_out, 8 * sets);
    uint64_t **ts_rows = staging ? stage.ts_row : ts_out, **bits_rows = staging ? stage.bits_row : bits_out;
    size_t done = 0, staged = 0;
    int stop = STEP_DONE;
    tsc_lanes_window wa, wb = {{a.pos, a.pos, a.pos, a.pos}};
    __m512i at_a = _mm512_set1_epi64(256), at_b = at_a;
    while (done < n && stop == STEP_DONE) {
        __m512i rows[4][8]; /* timestamps and values of set a, then of set b */
        size_t steps = 0, want = n - done < 8 ? n - done : 8;
        for (; steps < want && stop == STEP_DONE; steps++) {
            int fetched = window_spent(at_a);
            if (fetched) tsc_lanes_fetch(a.base, a.last_byte, a.pos, &wa, &at_a);
            if (sets == 2) {
                int fetched_b = window_spent(at_b);
                if (fetched_b) tsc_lanes_fetch(b.base, b.last_byte, b.pos, &wb, &at_b);
                fetched = fetched && fetched_b;
            }
            stop = fetched ? lanes_step(&a, &b, &wa, &wb, &at_a, &at_b, sets, &dods, 1, rows, steps)
                           : lanes_step(&a, &b, &wa, &wb, &at_a, &at_b, sets, &dods, 0, rows, steps);
            if (stop != STEP_DONE) break;
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
