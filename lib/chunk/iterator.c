/*
 * Chunk decoder: caller-allocated iterator with next, seek and batch read.
 *
 * The timestamp and value streams are read by two independent readers, so
 * the two per-sample dependency chains (dod -> delta -> ts, and
 * XOR -> window -> value) overlap in the CPU. Every read is bounds-checked
 * (tsc_br_window never loads outside the chunk); an overrun is reported once
 * per sample as TRUNCATED.
 */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_iter_next_bits_layout1 */
#include "format.h"
#include "../codec/xor.h"
#include "../codec2/format.h"
#include "../common/chunk_list.h"
#include "../common/lanes512.h"
#include "lanes.h"

static size_t fail(tschunk_iter *it, tschunk_error_code code)
{
    it->error = (uint32_t)code;
    return TSC_ERROR_CODE(code);
}

/* A dod of `payload` bits (two's complement) after a `prefix`-bit code at the top of win; the position moves past. */
TSC_INLINE uint64_t dod_field(uint64_t win, uint64_t *pos, unsigned prefix, unsigned payload)
{
    uint64_t sign = UINT64_C(1) << (payload - 1), raw = (win << prefix) >> (64 - payload);
    *pos += prefix + payload;
    return (raw ^ sign) - sign;
}

/*
 * One dod field at *pos, branching on its bucket. Where the bucket predicts (steady steps, or scrape jitter
 * within one bucket), the next position is known before this field's bits arrive, so the position chain is
 * an add. Computed from the loaded bits (count the ones, shift a table in a constant), it was a load and five
 * steps a sample, mispredicted or not (bench/MEASUREMENTS.md, 0.38.0).
 */
TSC_INLINE uint64_t decode_dod(const uint8_t *base, size_t byte_len, uint64_t *pos, int checked)
{
    uint64_t win = tsc_peek_if(base, byte_len, *pos, checked);
    if (!(win >> 63)) {
        *pos += 1;
        return 0;
    }
    if (!(win >> 62 & 1)) return dod_field(win, pos, 2, 5);
    if (!(win >> 61 & 1)) return dod_field(win, pos, 3, 8);
    if (!(win >> 60 & 1)) return dod_field(win, pos, 4, 11);
    if (!(win >> 59 & 1)) return dod_field(win, pos, 5, 20);
    uint64_t dod = tsc_peek_wide_if(base, byte_len, *pos + 5, 64, checked);
    *pos += TSC_DOD_MAX_BITS;
    return dod;
}

/* The bits left in a finished stream must be the zero padding of its last byte. */
static int stream_tail_ok(const tschunk_bit_reader *r)
{
    uint64_t left = r->bit_len - r->bit_pos;
    if (left >= 8) return 0;
    return left == 0 || (tsc_br_window(r) >> (64 - left)) == 0;
}

/* The end of a chunk's streams, every sample read: 0 or RESERVED_BITS. */
static tschunk_error_code streams_end_error(uint32_t count, unsigned flags, const tschunk_bit_reader *ts_in,
                                           const tschunk_bit_reader *val_in)
{
    if (count >= 2 && !(flags & TSCHUNK_FLAG_VAL_CONST) && !stream_tail_ok(val_in)) return TSCHUNK_ERROR_RESERVED_BITS;
    if (count >= 3 && !(flags & TSCHUNK_FLAG_TS_CONST) && !stream_tail_ok(ts_in)) return TSCHUNK_ERROR_RESERVED_BITS;
    return TSCHUNK_OK;
}

static size_t finish_check(tschunk_iter *it)
{
    tschunk_error_code code = streams_end_error(it->count, it->flags, &it->ts_in, &it->val_in);
    return code ? fail(it, code) : 0;
}

/* Decode sample number it->index into it->ts / it->bits. @return 0 or an error. */
static size_t step(tschunk_iter *restrict it)
{
    uint32_t i = it->index;
    if (TSC_UNLIKELY(i < 2)) {
        if (i == 0) {
            it->ts = it->first_ts;
            it->bits = it->first_bits;
            it->index = 1;
            return it->count == 1 ? finish_check(it) : 0;
        }
        it->delta = it->first_delta;
    } else if (!(it->flags & TSCHUNK_FLAG_TS_CONST)) {
        it->delta += decode_dod(it->ts_in.base, it->ts_in.byte_len, &it->ts_in.bit_pos, 1);
    }
    unsigned bad = 0;
    if (!(it->flags & TSCHUNK_FLAG_VAL_CONST)) {
        unsigned lead = it->window_lead, width = it->window_width;
        it->bits ^= tsc_xor_get(it->val_in.base, it->val_in.byte_len, &it->val_in.bit_pos, &lead, &width, &bad);
        it->window_lead = (uint8_t)lead;
        it->window_width = (uint8_t)width;
    }
    int64_t ts = (int64_t)((uint64_t)it->ts + it->delta);
    if (TSC_UNLIKELY(bad | (ts < it->ts))) return fail(it, TSCHUNK_ERROR_CORRUPT);
    if (TSC_UNLIKELY(tsc_br_overrun(&it->ts_in) | tsc_br_overrun(&it->val_in)))
        return fail(it, TSCHUNK_ERROR_TRUNCATED);
    it->ts = ts;
    it->index = ++i;
    return i == it->count ? finish_check(it) : 0;
}

/* Codec 2: decode the next group into `ts`/`bits` (the iterator's buffer or the caller's arrays). */
static size_t next_group(tschunk_iter *it, int64_t *ts, uint64_t *bits, uint32_t n)
{
    const tsc_codec2_frame f = {it->flags, it->first_ts, it->first_delta, it->first_bits};
    size_t r = tsc_codec2_read_group(it->chunk, it->size, it->group_next, n, &f, it->index == 0,
                                     it->index + n == it->count, it->ts, it->bits, ts, bits);
    if (tsc_is_error(r)) return fail(it, tschunk_get_error_code(r));
    it->group_next += r;
    it->ts = ts[n - 1];
    it->bits = bits[n - 1];
    return 0;
}

TSC_INLINE uint32_t next_group_len(const tschunk_iter *it)
{
    uint32_t left = it->count - it->index;
    return left < TSCHUNK_GROUP_SAMPLES ? left : TSCHUNK_GROUP_SAMPLES;
}

/* Codec 2: refill the group buffer (which the caller has used up). */
static size_t fill_group_buffer(tschunk_iter *it)
{
    uint32_t n = next_group_len(it);
    size_t err = next_group(it, it->group_ts, it->group_bits, n);
    if (err) return err;
    it->group_at = 0;
    it->group_len = n;
    return 0;
}

/* One sample from the group buffer (not empty). */
TSC_INLINE size_t take_buffered(tschunk_iter *it)
{
    it->ts = it->group_ts[it->group_at];
    it->bits = it->group_bits[it->group_at];
    it->group_at++;
    it->index++;
    return 0;
}

/* Codec 2's step: one sample from the group buffer. */
static size_t step_grouped(tschunk_iter *it)
{
    if (it->group_at == it->group_len) {
        size_t err = fill_group_buffer(it);
        if (err) return err;
    }
    return take_buffered(it);
}

static void fill_run_buffer(tschunk_iter *it);

TSC_INLINE size_t advance(tschunk_iter *it)
{
    if (it->codec == TSCHUNK_CODEC_TSC2) return step_grouped(it);
    if (it->group_at == it->group_len) fill_run_buffer(it);
    return it->group_at < it->group_len ? take_buffered(it) : step(it);
}

/* Samples from the group buffer into the caller's arrays (either may be NULL) from `n` on, up to `end`.
 * @return the new n. */
TSC_INLINE size_t copy_buffered(tschunk_iter *restrict it, int64_t *restrict ts, double *restrict values, size_t n,
                              size_t end)
{
    size_t take = tsc_take_buffered(it->group_ts, it->group_bits, &it->group_at, it->group_len, ts, values, n, end);
    if (!take) return n;
    it->index += (uint32_t)take;
    it->ts = it->group_ts[it->group_at - 1];
    it->bits = it->group_bits[it->group_at - 1];
    return n + take;
}

/*
 * Codec 2's batch read into caller arrays from sample `n` up to `end`: whole
 * groups decode straight into them, the rest through the group buffer.
 */
static size_t read_grouped(tschunk_iter *restrict it, int64_t *restrict ts, double *restrict values, size_t n,
                           size_t end)
{
    while (n < end) {
        size_t buffered = it->group_len - it->group_at;
        if (buffered == 0 && ts && values && end - n >= next_group_len(it)) {
            uint32_t len = next_group_len(it);
            size_t err = next_group(it, ts + n, (uint64_t *)(void *)(values + n), len);
            if (err) return err;
            it->index += len;
            n += len;
            continue;
        }
        if (buffered == 0) {
            size_t err = fill_group_buffer(it);
            if (err) return err;
        }
        n = copy_buffered(it, ts, values, n, end);
    }
    return n;
}

/* The batch loops' state, kept in registers inside them. */
typedef struct {
    uint64_t tpos, vpos, delta, bits;
    int64_t ts;
    unsigned lead, width, bad;
    uint64_t mask; /* the unchecked loops' window: ones where its bits go (set_mask) */
} run_state;

/* Most bits one field takes, plus the 64 bits a load reads at its last position. */
#define TS_MARGIN (TSC_DOD_MAX_BITS + 64u)
#define VAL_MARGIN (TSC_XOR_WORST_BITS + 64u)

/* The window's mask: width bits below the lead (0 before any window). */
TSC_INLINE void set_mask(run_state *st)
{
    st->mask = st->width ? (~UINT64_C(0) >> (64 - st->width)) << ((64 - st->lead - st->width) & 63) : 0;
}

/*
 * An XOR field for the unchecked loops (tsc_xor_get_if's format), which start only once a window exists
 * (width > 0; decode_run): a reused window cannot be bad, so only a new one is checked, and the window's bits
 * are the payload shifted down by the lead and masked (two steps on the value's path where four were). A
 * reused window of up to 55 bits comes from the field's first load (a second load cost three instructions);
 * random doubles' wider windows take one test more.
 */
TSC_INLINE uint64_t read_xor_unchecked(const uint8_t *base, run_state *st)
{
    uint64_t win = tsc_peek_if(base, 0, st->vpos, 0);
    if (!(win >> 63)) {
        st->vpos += 1;
        return 0;
    }
    unsigned head = 2;
    if ((win >> 62) & 1) {
        st->lead = (unsigned)(win >> 57) & 31;
        st->width = ((unsigned)(win >> 51) & 63) + 1;
        st->bad |= st->lead + st->width > 64;
        set_mask(st);
        head = 13;
    } else if (TSC_LIKELY(st->width <= TSC_BITS_MAX_FIELD - 2)) {
        st->vpos += 2 + st->width;
        return ((win << 2) >> st->lead) & st->mask;
    }
    uint64_t at = st->vpos + head;
    st->vpos = at + st->width;
    if (TSC_LIKELY(st->width <= TSC_BITS_MAX_FIELD)) return (tsc_peek_if(base, 0, at, 0) >> st->lead) & st->mask;
    return tsc_peek_wide_if(base, 0, at, st->width, 0) << ((64 - st->lead - st->width) & 63);
}

/* One sample of codec 1 (samples 2..); a constant stream is not read. */
TSC_INLINE void read_sample(const uint8_t *tbase, size_t tlen, const uint8_t *vbase, size_t vlen, run_state *st,
                            const int ts_const, const int val_const, const int checked)
{
    if (!ts_const) st->delta += decode_dod(tbase, tlen, &st->tpos, checked);
    int64_t next_ts = (int64_t)((uint64_t)st->ts + st->delta);
    if (checked) st->bad |= next_ts < st->ts; /* unchecked runs: over their output after it (time_went_back) */
    st->ts = next_ts;
    if (val_const) return;
    if (checked) st->bits ^= tsc_xor_get_if(vbase, vlen, &st->vpos, &st->lead, &st->width, &st->bad, 1);
    else st->bits ^= read_xor_unchecked(vbase, st);
}

/* Whether the unchecked loops' n timestamps (after `prev`) went back somewhere: one pass over them in lanes,
 * where a compare inside the loop cost about four instructions a sample. */
TSC_INLINE unsigned time_went_back(const int64_t *ts, size_t n, int64_t prev)
{
    return n ? (unsigned)tsc_codec2_goes_back(ts, n, prev) : 0;
}

/*
 * The batch loop, constant streams specialised away. Checked, reads past a
 * stream's end see zeros (never memory outside the chunk), so damage is
 * checked once, after the loop. Unchecked, it runs while each stream has a
 * whole field and a load's 8 bytes of room (tpos <= tfast, vpos <= vfast).
 * @return samples decoded.
 */
TSC_INLINE size_t run_loop(const tschunk_iter *restrict it, run_state *restrict io, int64_t *restrict ts_out,
                           uint64_t *restrict val_out, size_t n, uint64_t tfast, uint64_t vfast, const int ts_const,
                           const int val_const, const int checked)
{
    const uint8_t *tbase = it->ts_in.base, *vbase = it->val_in.base;
    const size_t tlen = it->ts_in.byte_len, vlen = it->val_in.byte_len;
    run_state st = *io;
    size_t k = 0;
    /* Unchecked, two samples a test of the limits: where the first can take its most bits, the second still fits. */
    if (!checked && (ts_const || tfast >= TSC_DOD_MAX_BITS) && (val_const || vfast >= TSC_XOR_WORST_BITS)) {
        const uint64_t tfast2 = tfast - TSC_DOD_MAX_BITS, vfast2 = vfast - TSC_XOR_WORST_BITS;
        for (; k + 2 <= n && (ts_const || st.tpos <= tfast2) && (val_const || st.vpos <= vfast2); k += 2) {
            read_sample(tbase, tlen, vbase, vlen, &st, ts_const, val_const, checked);
            ts_out[k] = st.ts;
            val_out[k] = st.bits;
            read_sample(tbase, tlen, vbase, vlen, &st, ts_const, val_const, checked);
            ts_out[k + 1] = st.ts;
            val_out[k + 1] = st.bits;
        }
    }
    for (; k < n && (checked || ((ts_const || st.tpos <= tfast) && (val_const || st.vpos <= vfast))); k++) {
        read_sample(tbase, tlen, vbase, vlen, &st, ts_const, val_const, checked);
        ts_out[k] = st.ts;
        val_out[k] = st.bits;
    }
    if (!checked) st.bad |= time_went_back(ts_out, k, io->ts);
    *io = st;
    return k;
}

/* One run_loop per kind of chunk (which streams are constant). */
TSC_INLINE size_t run_kind(const tschunk_iter *restrict it, run_state *restrict st, int64_t *restrict ts_out,
                           uint64_t *restrict val_out, size_t n, uint64_t tfast, uint64_t vfast, const int checked)
{
    switch (it->flags & (TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST)) {
    case 0: return run_loop(it, st, ts_out, val_out, n, tfast, vfast, 0, 0, checked);
    case TSCHUNK_FLAG_TS_CONST: return run_loop(it, st, ts_out, val_out, n, tfast, vfast, 1, 0, checked);
    case TSCHUNK_FLAG_VAL_CONST: return run_loop(it, st, ts_out, val_out, n, tfast, vfast, 0, 1, checked);
    default: return run_loop(it, st, ts_out, val_out, n, tfast, vfast, 1, 1, checked);
    }
}

static size_t run_unchecked(const tschunk_iter *restrict it, run_state *restrict st, int64_t *restrict ts_out,
                            uint64_t *restrict val_out, size_t n, uint64_t tfast, uint64_t vfast)
{
    return run_kind(it, st, ts_out, val_out, n, tfast, vfast, 0);
}

#ifdef TSC_HAVE_AVX2
/* The same loop with BMI2's shifts by a register (no count moved to CL), LZCNT and MOVBE (tsc_bmi_here), chosen at
 * run time. */
TSC_BMI_TARGET static size_t run_unchecked_bmi2(const tschunk_iter *restrict it, run_state *restrict st,
                                                int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n,
                                                uint64_t tfast, uint64_t vfast)
{
    return run_kind(it, st, ts_out, val_out, n, tfast, vfast, 0);
}
#endif

/* Below this many samples the unchecked loop's setup is not worth it. */
#define FAST_MIN_SAMPLES 8

/*
 * The positions up to which each stream has a whole field and a load's 8
 * bytes of room (a constant stream has no bits and no limit). The value
 * stream follows the timestamp stream in the chunk, so the timestamp
 * stream's room runs to the value stream's end: a sparse timestamp stream
 * (7 bits a sample under scrape jitter) would otherwise leave its last ~19
 * samples to the checked loop. A run that read past the timestamp stream's
 * end has overrun it, and is taken again by the checked loop (fast_run_ok).
 * @return 0 when a stream is too short for the unchecked loop at all.
 */
static int fast_limits(const tschunk_iter *it, uint64_t *tfast, uint64_t *vfast)
{
    *tfast = *vfast = UINT64_MAX;
    if (!(it->flags & TSCHUNK_FLAG_TS_CONST)) {
        uint64_t room = it->ts_in.bit_len + (it->flags & TSCHUNK_FLAG_VAL_CONST ? 0 : it->val_in.bit_len);
        if (room < TS_MARGIN) return 0;
        *tfast = room - TS_MARGIN;
    }
    if (!(it->flags & TSCHUNK_FLAG_VAL_CONST)) {
        if (it->val_in.bit_len < VAL_MARGIN) return 0;
        *vfast = it->val_in.bit_len - VAL_MARGIN;
    }
    return 1;
}

/* Samples decoded unchecked from the start of the run (0 when a stream is too close to its end). */
static size_t run_fast(const tschunk_iter *restrict it, run_state *restrict st, int64_t *restrict ts_out,
                       uint64_t *restrict val_out, size_t n, int loops)
{
    uint64_t tfast, vfast;
    if (n < FAST_MIN_SAMPLES || loops == TSC_LOOPS_CHECKED || !fast_limits(it, &tfast, &vfast)) return 0;
#ifdef TSC_HAVE_AVX2
    if (loops != TSC_LOOPS_SCALAR && tsc_bmi_here())
        return run_unchecked_bmi2(it, st, ts_out, val_out, n, tfast, vfast);
#endif
    return run_unchecked(it, st, ts_out, val_out, n, tfast, vfast);
}

static run_state load_state(const tschunk_iter *it)
{
    run_state st = {it->ts_in.bit_pos, it->val_in.bit_pos, it->delta, it->bits, it->ts,
                    it->window_lead, it->window_width, 0, 0};
    set_mask(&st);
    return st;
}

/* The error a run of samples met (st: where it ended): a bad field or time going back, a stream overrun. */
static tschunk_error_code run_error(unsigned flags, const run_state *st, uint64_t ts_bit_len, uint64_t val_bit_len)
{
    const int ts_const = flags & TSCHUNK_FLAG_TS_CONST, val_const = flags & TSCHUNK_FLAG_VAL_CONST;
    if (TSC_UNLIKELY(st->bad)) return TSCHUNK_ERROR_CORRUPT;
    if (TSC_UNLIKELY((!ts_const && st->tpos > ts_bit_len) || (!val_const && st->vpos > val_bit_len)))
        return TSCHUNK_ERROR_TRUNCATED;
    return TSCHUNK_OK;
}

/* Whether an unchecked run stayed inside both streams and met no bad field: otherwise its samples may have
 * come from bits past the timestamp stream (fast_limits), and the checked loop takes them again, so that
 * every loop reports the same error at the same sample. */
static int fast_run_ok(const tschunk_iter *it, const run_state *st)
{
    return run_error(it->flags, st, it->ts_in.bit_len, it->val_in.bit_len) == TSCHUNK_OK;
}

/* Keeps n decoded samples' state, or the error they met (sticky). @return n or the error. */
static size_t save_state(tschunk_iter *it, const run_state *st, size_t n)
{
    const int ts_const = it->flags & TSCHUNK_FLAG_TS_CONST, val_const = it->flags & TSCHUNK_FLAG_VAL_CONST;
    tschunk_error_code code = run_error(it->flags, st, it->ts_in.bit_len, it->val_in.bit_len);
    if (TSC_UNLIKELY(code)) return fail(it, code);
    if (!ts_const) it->ts_in.bit_pos = st->tpos;
    if (!val_const) it->val_in.bit_pos = st->vpos;
    it->ts = st->ts;
    it->delta = st->delta;
    it->bits = st->bits;
    it->window_lead = (uint8_t)st->lead;
    it->window_width = (uint8_t)st->width;
    it->index += (uint32_t)n;
    return n;
}

/* One codec-1 chunk of a pair: its streams' unchecked limits, its state and where its samples go. */
typedef struct {
    const uint8_t *tbase, *vbase;
    uint64_t tfast, vfast;
    run_state st;
    int64_t *ts;
    uint64_t *bits;
} lane;

/*
 * Two codec-1 chunks (both streams present in each) in one unchecked loop:
 * each chunk's value stream is one serial chain (a field's length is known
 * only once it is read); two chunks side by side run two at once.
 * @return samples decoded from each chunk.
 */
TSC_INLINE size_t pair_loop(lane *restrict a, lane *restrict b, size_t n)
{
    run_state sa = a->st, sb = b->st;
    size_t k = 0;
    for (; k < n && sa.tpos <= a->tfast && sa.vpos <= a->vfast && sb.tpos <= b->tfast && sb.vpos <= b->vfast; k++) {
        read_sample(a->tbase, 0, a->vbase, 0, &sa, 0, 0, 0);
        read_sample(b->tbase, 0, b->vbase, 0, &sb, 0, 0, 0);
        a->ts[k] = sa.ts;
        a->bits[k] = sa.bits;
        b->ts[k] = sb.ts;
        b->bits[k] = sb.bits;
    }
    sa.bad |= time_went_back(a->ts, k, a->st.ts);
    sb.bad |= time_went_back(b->ts, k, b->st.ts);
    a->st = sa;
    b->st = sb;
    return k;
}

static size_t pair_unchecked(lane *restrict a, lane *restrict b, size_t n) { return pair_loop(a, b, n); }

#ifdef TSC_HAVE_AVX2
TSC_BMI_TARGET static size_t pair_unchecked_bmi2(lane *restrict a, lane *restrict b, size_t n)
{
    return pair_loop(a, b, n);
}
#endif

/*
 * A lane for a codec-1 chunk past its first two samples with both streams
 * and room for an unchecked loop. @return 0 for any other chunk.
 */
static int make_lane(const tschunk_iter *it, int64_t *ts, double *values, lane *l)
{
    if (it->codec != TSCHUNK_CODEC_GORILLA || it->index < 2 || it->error || !it->window_width ||
        (it->flags & (TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST)) || !fast_limits(it, &l->tfast, &l->vfast))
        return 0;
    l->tbase = it->ts_in.base;
    l->vbase = it->val_in.base;
    l->st = load_state(it);
    l->ts = ts;
    l->bits = (uint64_t *)(void *)values;
    return 1;
}

/* As far as the pair loop takes two pairable chunks side by side. @return samples decoded from each, or an error. */
static size_t decode_pair(tschunk_iter *a, int64_t *ts_a, double *values_a, tschunk_iter *b, int64_t *ts_b,
                          double *values_b, int loops)
{
    size_t n = a->count - a->index < b->count - b->index ? a->count - a->index : b->count - b->index;
    lane la, lb;
    if (n < FAST_MIN_SAMPLES || loops == TSC_LOOPS_CHECKED || !make_lane(a, ts_a, values_a, &la) ||
        !make_lane(b, ts_b, values_b, &lb))
        return 0;
    size_t k;
#ifdef TSC_HAVE_AVX2
    if (loops != TSC_LOOPS_SCALAR && tsc_bmi_here()) k = pair_unchecked_bmi2(&la, &lb, n);
    else
#endif
        k = pair_unchecked(&la, &lb, n);
    if (TSC_UNLIKELY(!fast_run_ok(a, &la.st) || !fast_run_ok(b, &lb.st))) return 0; /* each alone, checked */
    size_t r = save_state(a, &la.st, k);
    if (tsc_is_error(r)) return r;
    return save_state(b, &lb.st, k);
}

/*
 * Samples 2.. of codec 1: unchecked while both streams have room, checked
 * after. A call that met a field no encoder writes, time going backwards or
 * an overrun returns the error (sticky).
 * @return samples decoded, or an error.
 */
static size_t decode_run(tschunk_iter *restrict it, int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n,
                         int loops)
{
    run_state st = load_state(it);
    size_t k = 0;
    /* Until a window exists (values equal so far), the checked loop: a reused window would be bad then. */
    while (k < n && !st.width && !(it->flags & TSCHUNK_FLAG_VAL_CONST))
        k += run_kind(it, &st, ts_out + k, val_out + k, 1, 0, 0, 1);
    if (k) set_mask(&st); /* the checked loop keeps no mask; load_state made it otherwise */
    k += run_fast(it, &st, ts_out + k, val_out + k, n - k, loops);
    if (TSC_UNLIKELY(!fast_run_ok(it, &st))) { /* the checked loop takes every sample again */
        st = load_state(it);
        k = 0;
    }
    run_kind(it, &st, ts_out + k, val_out + k, n - k, 0, 0, 1);
    return save_state(it, &st, n);
}

/* group_next (codec 2's next group; unused by codec 1) once a run of codec 1's iterator failed: it steps on. */
#define RUNS_FAILED SIZE_MAX

/*
 * Codec 1's iterator: the next run of samples (up to a group buffer's, and
 * never the chunk's last sample, whose step checks the streams' ends)
 * decoded by the batch loop into the group buffer, where a step a sample
 * took about 2.5 times the instructions; index goes on counting the samples
 * returned. A damaged run is dropped and the samples are stepped one at a
 * time from there, so that the error comes at the sample it always came at.
 */
static void fill_run_buffer(tschunk_iter *it)
{
    uint32_t left = it->count - it->index;
    if (it->index < 2 || left < 2 || it->group_next == RUNS_FAILED) return;
    uint32_t n = left - 1 < TSCHUNK_GROUP_SAMPLES ? left - 1 : TSCHUNK_GROUP_SAMPLES;
    size_t r = decode_run(it, it->group_ts, it->group_bits, n, TSC_LOOPS_AUTO);
    if (tsc_is_error(r)) {
        it->error = 0; /* decode_run's sticky error, left to the steps */
        it->group_next = RUNS_FAILED;
        return;
    }
    it->index -= n;
    it->group_at = 0;
    it->group_len = n;
}

void tsc_chunk_iter_step_only(tschunk_iter *it)
{
    if (it->codec == TSCHUNK_CODEC_GORILLA) it->group_next = RUNS_FAILED;
}

/* The iterator at the chunk's first sample, from its parsed header. */
static void iter_start(tschunk_iter *it, const uint8_t *src, size_t size, const tsc_chunk_header *h)
{
    /* Not the 2 KiB group buffer: group_at == group_len == 0 marks it empty. */
    memset(it, 0, offsetof(tschunk_iter, group_ts));
    it->chunk = src;
    it->size = size;
    it->count = h->info.count;
    it->flags = (uint8_t)h->info.flags;
    it->first_ts = h->info.first_ts;
    it->first_bits = h->info.first_bits;
    it->first_delta = h->info.first_delta;
    it->codec = h->info.codec;
    it->group_next = h->ts_offset;
    tsc_br_init(&it->val_in, src + h->value_offset, h->info.value_bytes);
    tsc_br_init(&it->ts_in, src + h->ts_offset, h->info.ts_bytes);
}

size_t tschunk_iter_init(tschunk_iter *it, const void *chunk, size_t size)
{
    if (!it || !chunk) return TSC_ERROR(BAD_PARAMETER);
    tsc_chunk_header h;
    size_t err = tsc_chunk_parse((const uint8_t *)chunk, size, &h, TSC_PARSE_HEADER);
    if (err) return err;
    iter_start(it, (const uint8_t *)chunk, size, &h);
    return 0;
}

/* Everything but a buffered codec-2 sample: kept out of line so that the fast path saves no registers. */
__attribute__((noinline)) static size_t next_slow(tschunk_iter *it, int64_t *ts, uint64_t *value_bits)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    if (it->pending) {
        it->pending = 0;
    } else {
        if (it->index >= it->count) return 0;
        size_t err = advance(it);
        if (err) return err;
    }
    if (ts) *ts = it->ts;
    if (value_bits) *value_bits = it->bits;
    return 1;
}

size_t tschunk_iter_next_bits(tschunk_iter *it, int64_t *ts, uint64_t *value_bits)
{
    uint32_t at = it->group_at;
    if (TSC_LIKELY(at < it->group_len && !(it->pending | it->error))) { /* from the decoded group or run */
        uint64_t t = (uint64_t)it->group_ts[at], b = it->group_bits[at];
        it->group_at = at + 1;
        it->index++;
        it->ts = (int64_t)t;
        it->bits = b;
        if (ts) *ts = (int64_t)t;
        if (value_bits) *value_bits = b;
        return 1;
    }
    return next_slow(it, ts, value_bits);
}

/* tschunk_iter_next_inline's slow path: its name says which iterator fields that inline code relies on. */
_Static_assert(TSCHUNK_ITER_LAYOUT == 1, "a new iterator layout renames tschunk_iter_next_bits_layout1");
size_t tschunk_iter_next_bits_layout1(tschunk_iter *it, int64_t *ts, uint64_t *value_bits)
{
    return tschunk_iter_next_bits(it, ts, value_bits);
}

size_t tschunk_iter_next(tschunk_iter *it, int64_t *ts, double *value)
{
    uint64_t bits;
    size_t r = tschunk_iter_next_bits(it, ts, &bits);
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}

size_t tschunk_iter_seek(tschunk_iter *it, int64_t t)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    /* The wanted sample may lie at or before the current one: start over. */
    if (it->index > 0 && it->ts >= t) {
        size_t err = tschunk_iter_init(it, it->chunk, it->size);
        if (err) return err;
    }
    it->pending = 0;
    while (it->index < it->count) {
        size_t err = advance(it);
        if (err) return err;
        if (it->ts >= t) {
            it->pending = 1;
            return 1;
        }
    }
    return 0;
}

/* Step one sample at a time into the arrays (first samples, stream ends, errors). */
static size_t read_slow(tschunk_iter *it, int64_t *ts, uint64_t *bits, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        size_t err = step(it);
        if (TSC_UNLIKELY(err != 0)) return err;
        ts[k] = it->ts;
        bits[k] = it->bits;
    }
    return n;
}

#define READ_BLOCK 256

static size_t read_samples(tschunk_iter *restrict it, int64_t *restrict ts, double *restrict values,
                           size_t capacity, int loops)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    int64_t ts_tmp[READ_BLOCK];
    uint64_t bits_tmp[READ_BLOCK];
    size_t n = 0;
    if (it->pending && capacity) {
        it->pending = 0;
        if (ts) ts[0] = it->ts;
        if (values) memcpy(&values[0], &it->bits, 8);
        n = 1;
    }
    size_t left = it->count - it->index;
    size_t end = capacity - n < left ? capacity : n + left;
    if (it->codec == TSCHUNK_CODEC_TSC2) return read_grouped(it, ts, values, n, end);
    n = copy_buffered(it, ts, values, n, end); /* what the iterator's steps decoded ahead */
    while (n < end) {
        /* Either array may be NULL: decode through small blocks then. */
        int direct = ts && values;
        size_t want = end - n;
        if (!direct && want > READ_BLOCK) want = READ_BLOCK;
        int64_t *t_dst = direct ? ts + n : ts_tmp;
        uint64_t *v_dst = direct ? (uint64_t *)(void *)(values + n) : bits_tmp;
        size_t got = it->index >= 2 ? decode_run(it, t_dst, v_dst, want, loops) : 0;
        if (TSC_UNLIKELY(tsc_is_error(got))) return got;
        if (got < want) {
            size_t r = read_slow(it, t_dst + got, v_dst + got, 1);
            if (TSC_UNLIKELY(tsc_is_error(r))) return r;
            got++;
        }
        if (!direct) {
            if (ts) memcpy(ts + n, ts_tmp, got * sizeof *ts);
            if (values) memcpy(values + n, bits_tmp, got * sizeof *values);
        }
        n += got;
    }
    if (it->index == it->count && it->count >= 2) {
        size_t r = finish_check(it);
        if (r) return r;
    }
    return n;
}

size_t tschunk_iter_read(tschunk_iter *restrict it, int64_t *restrict ts, double *restrict values,
                         size_t capacity)
{
    return read_samples(it, ts, values, capacity, TSC_LOOPS_AUTO);
}

/* A chunk whose header h was parsed, into ts/values of capacity entries (at least its count). */
static size_t decode_parsed(const uint8_t *src, size_t size, const tsc_chunk_header *h, int64_t *ts, double *values,
                            size_t capacity, int loops)
{
    /* Codec 2 into both arrays: group after group, without an iterator's state and group buffer. */
    if (h->info.codec == TSCHUNK_CODEC_TSC2 && ts && values)
        return tsc_codec2_decode_chunk(src, size, &h->info, h->ts_offset, ts, (uint64_t *)(void *)values);
    tschunk_iter it;
    iter_start(&it, src, size, h);
    return read_samples(&it, ts, values, capacity, loops);
}

size_t tsc_chunk_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops)
{
    if (!chunk) return TSC_ERROR(BAD_PARAMETER);
    tsc_chunk_header h;
    size_t err = tsc_chunk_parse((const uint8_t *)chunk, size, &h, TSC_PARSE_HEADER);
    if (err) return err;
    if (h.info.count > capacity) return TSC_ERROR(DST_TOO_SMALL);
    return decode_parsed((const uint8_t *)chunk, size, &h, ts, values, capacity, loops);
}

/*
 * Chunks i and i + 1 (when there is one) into ts/values, their headers parsed (h[0], h[1]).
 * @return samples written or an error.
 */
static size_t decode_two_parsed(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks,
                                const tsc_chunk_header *h, int64_t *ts, double *values, int loops)
{
    size_t lanes = i + 1 < n_chunks ? 2 : 1, at[2] = {0, lanes == 2 ? h[0].info.count : 0}, r;
    int pair = lanes == 2 && h[0].info.codec == TSCHUNK_CODEC_GORILLA && h[1].info.codec == TSCHUNK_CODEC_GORILLA;
    if (!pair) { /* one by one: codec 2 without iterators */
        for (size_t l = 0; l < lanes; l++) {
            r = decode_parsed((const uint8_t *)chunks[i + l], sizes[i + l], &h[l], ts + at[l], values + at[l],
                              h[l].info.count, loops);
            if (tsc_is_error(r)) return r;
        }
        return at[lanes - 1] + h[lanes - 1].info.count;
    }
    tschunk_iter it[2];
    for (size_t l = 0; l < 2; l++) iter_start(&it[l], (const uint8_t *)chunks[i + l], sizes[i + l], &h[l]);
    for (size_t l = 0; l < 2; l++) {
        /* The first two samples come from the header. */
        r = read_samples(&it[l], ts + at[l], values + at[l], it[l].count < 2 ? it[l].count : 2, loops);
        if (tsc_is_error(r)) return r;
        at[l] += r;
    }
    r = decode_pair(&it[0], ts + at[0], values + at[0], &it[1], ts + at[1], values + at[1], loops);
    if (tsc_is_error(r)) return r;
    at[0] += r;
    at[1] += r;
    size_t total = 0;
    for (size_t l = 0; l < 2; l++) {
        r = read_samples(&it[l], ts + at[l], values + at[l], it[l].count - it[l].index, loops);
        if (tsc_is_error(r)) return r;
        total += it[l].count;
    }
    return total;
}

/* Chunks i and i + 1 (when there is one) into ts/values. @return samples written or an error. */
static size_t decode_two(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks, int64_t *ts,
                         double *values, int loops)
{
    tsc_chunk_header h[2];
    for (size_t l = 0; l < 2 && i + l < n_chunks; l++) {
        size_t r = tsc_chunk_parse((const uint8_t *)chunks[i + l], sizes[i + l], &h[l], TSC_PARSE_HEADER);
        if (r) return r;
    }
    return decode_two_parsed(chunks, sizes, i, n_chunks, h, ts, values, loops);
}

/* A chunk's declared count from its header's first fields (the rest is parsed when it is decoded). */
static size_t header_count(const void *chunk, size_t size)
{
    return chunk ? tsc_chunk_count((const uint8_t *)chunk, size) : TSC_ERROR(BAD_PARAMETER);
}

#ifdef TSC_HAVE_AVX2
/* The kernel reads 32 bytes of a stream from a step's first byte (fewer, then zeros, past its last 32). */
#define LANE_BYTES 32

/*
 * Whether a chunk (header parsed) goes to the AVX-512 lanes: codec 1, 8 samples or more past the first two,
 * and a bit a sample or more (not both streams constant: those decode from their header alone, faster).
 */
static int lane_fits(const tsc_chunk_header *h)
{
    const tschunk_chunk_info *info = &h->info;
    return info->codec == TSCHUNK_CODEC_GORILLA && info->count >= 2 + FAST_MIN_SAMPLES &&
           (uint64_t)(info->ts_bytes + info->value_bytes) * 8 >= info->count;
}

/* A chunk's lane past its first two samples (st: where they left it): a constant stream reads zeros. */
static tsc_chunk_lane lane_of(const uint8_t *src, const tsc_chunk_header *h, const run_state *st, int64_t *ts,
                              double *values)
{
    const tschunk_chunk_info *info = &h->info;
    int ts_const = info->flags & TSCHUNK_FLAG_TS_CONST, val_const = info->flags & TSCHUNK_FLAG_VAL_CONST;
    tsc_chunk_lane one = {ts_const ? tsc_chunk_lane_zeros : src + h->ts_offset,
                          val_const ? tsc_chunk_lane_zeros : src + h->value_offset,
                          (uint64_t)(ts_const ? TSC_CHUNK_LANE_ZEROS : info->ts_bytes) - LANE_BYTES,
                          (uint64_t)(val_const ? TSC_CHUNK_LANE_ZEROS : info->value_bytes) - LANE_BYTES,
                          st->tpos, st->vpos, st->delta, st->bits, st->ts, st->lead, st->width, st->bad, ts,
                          (uint64_t *)(void *)values};
    return one;
}

static run_state lane_state(const tsc_chunk_lane *c)
{
    run_state st = {c->tpos, c->vpos, c->delta, c->bits, c->ts, c->lead, c->width, c->bad, 0};
    return st;
}

/*
 * One sample of every lane with the checked loop (the step the kernel stopped before: a 64-bit dod). A
 * constant stream's lane reads zeros, as in the kernel: `0` fields, the same as the constant flags.
 */
static void lanes_scalar_step(tsc_chunk_lane *lanes, size_t count)
{
    for (size_t l = 0; l < count; l++) {
        tsc_chunk_lane *one = &lanes[l];
        run_state st = lane_state(one);
        read_sample(one->tbase, (size_t)(one->tlast + LANE_BYTES), one->vbase, (size_t)(one->vlast + LANE_BYTES), &st,
                    0, 0, 1);
        one->ts_out[0] = st.ts;
        one->bits_out[0] = st.bits;
        *one = (tsc_chunk_lane){one->tbase, one->vbase, one->tlast, one->vlast, st.tpos, st.vpos, st.delta, st.bits,
                                st.ts, st.lead, st.width, st.bad, one->ts_out + 1, one->bits_out + 1};
    }
}

/*
 * A list of chunks in the lanes (tsc_lane_list_decode): each slot's chunk header and lane. An iterator
 * (2 KiB) is made for a chunk only when it starts and when it ends, one at a time on the stack.
 */
typedef struct {
    tsc_lane_list list;
    const uint8_t *chunk[TSC_LIST_LANES];
    size_t size[TSC_LIST_LANES];
    tsc_chunk_header h[TSC_LIST_LANES];
    tsc_chunk_lane lane[TSC_LIST_LANES];
    int64_t idle_ts[TSC_LANE_IDLE_STEPS + 1];
    uint64_t idle_bits[TSC_LANE_IDLE_STEPS + 1];
    int avx512; /* the AVX-512 kernels, else the AVX2 ones */
} chunk_lanes;

/* Chunk j's first two samples (from its header) with an iterator, then the lanes for the rest; a chunk that
 * does not fit them (lane_fits) is decoded whole here. */
static size_t start_chunk(tsc_lane_list *list, size_t slot, size_t j, size_t at, size_t *count)
{
    chunk_lanes *C = (chunk_lanes *)list;
    const uint8_t *src = (const uint8_t *)list->chunks[j];
    tsc_chunk_header *h = &C->h[slot];
    size_t r = src ? tsc_chunk_parse(src, list->sizes[j], h, TSC_PARSE_HEADER) : TSC_ERROR(BAD_PARAMETER);
    if (r) return r;
    *count = h->info.count;
    if (!lane_fits(h)) {
        r = decode_parsed(src, list->sizes[j], h, list->ts + at, list->values + at, h->info.count, list->loops);
        return tsc_is_error(r) ? r : 0;
    }
    /* Sample 1 as the iterator's step takes it: the header's delta, the value stream's first field; its
     * errors (a bad field, a stream overrun) are the lane's, reported when the chunk ends. */
    const tschunk_chunk_info *info = &h->info;
    run_state st = {0, 0, info->first_delta, info->first_bits, info->first_ts, 0, 0, 0, 0};
    read_sample(NULL, 0, src + h->value_offset, info->value_bytes, &st, 1, (info->flags & TSCHUNK_FLAG_VAL_CONST) != 0,
                1);
    int64_t *ts = list->ts + at;
    uint64_t *bits = (uint64_t *)(void *)(list->values + at);
    ts[0] = info->first_ts;
    bits[0] = info->first_bits;
    ts[1] = st.ts;
    bits[1] = st.bits;
    C->chunk[slot] = src;
    C->size[slot] = list->sizes[j];
    C->lane[slot] = lane_of(src, h, &st, ts + 2, list->values + at + 2);
    list->left[slot] = info->count - 2;
    return 1;
}

static void idle_lanes(tsc_lane_list *list, size_t width)
{
    chunk_lanes *C = (chunk_lanes *)list;
    const uint64_t zeros_last = TSC_CHUNK_LANE_ZEROS - LANE_BYTES;
    for (size_t l = list->live; l < width; l++)
        C->lane[l] = (tsc_chunk_lane){tsc_chunk_lane_zeros, tsc_chunk_lane_zeros, zeros_last, zeros_last, 0, 0, 0, 0,
                                      0, 0, 0, 0, C->idle_ts, C->idle_bits};
}

static size_t run_kernel(tsc_lane_list *list, size_t width, size_t n, int *escaped)
{
    chunk_lanes *C = (chunk_lanes *)list;
    if (!C->avx512)
        return width == 16 ? tsc_chunk_lanes16_avx2(C->lane, n, escaped) : tsc_chunk_lanes8_avx2(C->lane, n, escaped);
    return width == 16 ? tsc_chunk_lanes16_avx512(C->lane, n, escaped) : tsc_chunk_lanes8_avx512(C->lane, n, escaped);
}

static void scalar_step(tsc_lane_list *list, size_t width) { lanes_scalar_step(((chunk_lanes *)list)->lane, width); }

/*
 * The lane's state checked (a bad field, time going back, an overrun) and, when the lanes read every
 * sample, the end of the streams (padding bits zero), as the iterator checks them; else the rest decoded
 * by an iterator, which checks all that.
 */
static size_t finish_chunk(tsc_lane_list *list, size_t slot)
{
    chunk_lanes *C = (chunk_lanes *)list;
    if (!list->left[slot]) {
        const tsc_chunk_header *h = &C->h[slot];
        run_state st = lane_state(&C->lane[slot]);
        tschunk_bit_reader ts_in, val_in;
        tsc_br_init(&ts_in, C->chunk[slot] + h->ts_offset, h->info.ts_bytes);
        tsc_br_init(&val_in, C->chunk[slot] + h->value_offset, h->info.value_bytes);
        tschunk_error_code code = run_error(h->info.flags, &st, ts_in.bit_len, val_in.bit_len);
        ts_in.bit_pos = st.tpos;
        val_in.bit_pos = st.vpos;
        if (!code) code = streams_end_error(h->info.count, h->info.flags, &ts_in, &val_in);
        return code ? TSC_ERROR_CODE(code) : 0;
    }
    tschunk_iter it;
    iter_start(&it, C->chunk[slot], C->size[slot], &C->h[slot]);
    it.index = 2;
    run_state st = lane_state(&C->lane[slot]);
    size_t r = save_state(&it, &st, it.count - 2 - list->left[slot]);
    if (!tsc_is_error(r))
        r = read_samples(&it, C->lane[slot].ts_out, (double *)(void *)C->lane[slot].bits_out, list->left[slot],
                         list->loops);
    return tsc_is_error(r) ? r : 0;
}

static size_t drain_chunks(tsc_lane_list *list)
{
    size_t r = 0;
    for (size_t l = 0; !r && l < list->live; l++) r = finish_chunk(list, l);
    return r;
}

static void move_chunk(tsc_lane_list *list, size_t to, size_t from)
{
    chunk_lanes *C = (chunk_lanes *)list;
    C->chunk[to] = C->chunk[from];
    C->size[to] = C->size[from];
    C->h[to] = C->h[from];
    C->lane[to] = C->lane[from];
}

static const tsc_lane_ops chunk_lane_ops = {start_chunk, finish_chunk, drain_chunks, move_chunk,
                                            idle_lanes, run_kernel, scalar_step, header_count};

/* Chunks i.. into ts/values, codec 1 in the AVX-512 or AVX2 lanes (tsc_lane_list_decode). */
static size_t decode_in_lanes(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks,
                              int64_t *ts, double *values, int loops, int avx512)
{
    chunk_lanes C;
    C.list = (tsc_lane_list){chunks, sizes, n_chunks, 0, ts, values, 0, loops, 0, {0}, {0}};
    C.avx512 = avx512;
    return tsc_lane_list_decode(&C.list, i, &chunk_lane_ops);
}
#endif

#ifdef TSC_HAVE_AVX2
/* Whether a list's first chunk (unchecked) says codec 1: a list of codec-2 chunks has no use for the lanes. */
static int starts_with_codec1(const void *const *chunks, const size_t *sizes, size_t i)
{
    return chunks[i] && sizes[i] >= 2 && (((const uint8_t *)chunks[i])[1] & 0x0f) == TSCHUNK_CODEC_GORILLA;
}
#endif

/*
 * Chunks i.. (all of them): a list of codec-1 chunks in AVX-512 lanes when the CPU has them, else in AVX2
 * lanes (codec-2 chunks in it decoded whole as they come); without AVX2, two at a time.
 */
static size_t decode_some(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks, int64_t *ts,
                          double *values, int loops)
{
#ifdef TSC_HAVE_AVX2
    if (n_chunks - i >= 8 && (loops == TSC_LOOPS_AUTO || loops == TSC_LOOPS_AVX2) &&
        starts_with_codec1(chunks, sizes, i)) {
        int avx512 = loops == TSC_LOOPS_AUTO && tsc_lanes_here();
        if (avx512 || tsc_avx2_here()) return decode_in_lanes(chunks, sizes, i, n_chunks, ts, values, loops, avx512);
    }
#endif
    size_t done = 0;
    for (size_t k = i; k < n_chunks; k += 2) {
        size_t r = decode_two(chunks, sizes, k, n_chunks, ts + done, values + done, loops);
        if (tsc_is_error(r)) return r;
        done += r;
    }
    return done;
}

size_t tsc_chunk_decode_chunks_with(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                    double *values, size_t capacity, int loops)
{
    return tsc_decode_chunk_list(chunks, sizes, n_chunks, ts, values, capacity, loops, header_count, SIZE_MAX,
                                 decode_some);
}

size_t tschunk_decode_chunks(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                             double *values, size_t capacity)
{
    return tsc_chunk_decode_chunks_with(chunks, sizes, n_chunks, ts, values, capacity, TSC_LOOPS_AUTO);
}

size_t tschunk_decode(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity)
{
    return tsc_chunk_decode_with(chunk, size, ts, values, capacity, TSC_LOOPS_AUTO);
}
