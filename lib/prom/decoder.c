/*
 * Prometheus XOR chunk decoder: iterator, seek, batch read. Follows
 * Prometheus' reader (a window-reuse field before any window reads 64 bits;
 * bytes after the last sample are ignored) and never reads outside the chunk.
 */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_prom_iter_next_bits_layout1 */
#include "../common/common.h"
#include "../codec/bitstream.h"
#include "../common/chunk_list.h"
#include "decoder.h"
#include "../common/lanes512.h"

/*
 * The iterator's step and its caller start on 64-byte lines: where the 0.17.0 build happened to place them
 * (0x...950 and 0x...620 in `bench`, nothing in them changed), tschunk_prom_iter_next_bits took 18-20 ns
 * a sample on counter instead of 10; -falign-functions=64 or this gives 10 again.
 */
#define TSC_HOT_ALIGN __attribute__((aligned(64)))

static size_t fail(tschunk_prom_iter *it, tschunk_error_code code)
{
    it->error = (uint32_t)code;
    return TSC_ERROR_CODE(code);
}

/* Go's binary.Uvarint: LEB128, non-canonical forms accepted, > 64 bits refused.
 * @return bytes read, 0 when truncated or overflowing. */
static size_t go_uvarint(const uint8_t *p, size_t avail, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < avail && i < 10; i++) {
        uint64_t b = p[i];
        if (i == 9 && b > 1) return 0;
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

/*
 * The decode loop, written once and compiled as a bounds-checked loop (near
 * the chunk's end) and an unchecked one (while a whole sample and the 8-byte
 * loads behind it lie inside the chunk). The unchecked one also has a BMI2
 * twin (shifts by a register without moving the count to CL), chosen at
 * run time; tests compare the three on the same chunks.
 */
typedef struct {
    uint64_t pos, delta, bits;
    int64_t ts;
    uint64_t mask; /* the window: ones where its bits go in a value (bits 64 - lead - width .. 63 - lead) */
    unsigned lead, width, shift, bad; /* shift: 64 - lead - width, the window's lowest bit */
} run_state;

/* Most bits one sample takes (a 68-bit dod, a 77-bit XOR field); FAST_MARGIN adds the 64 bits a load reads. */
#define SAMPLE_BITS_MAX (68u + 77u)
#define FAST_MARGIN (SAMPLE_BITS_MAX + 64u)

/*
 * A dod field: `0`, `10`+14, `110`+17, `1110`+20, `1111`+64 (escape). An
 * n-bit payload v reads as v - 2^n when v > 2^(n-1), as Prometheus does (not
 * two's complement: +2^(n-1) is in range), which is ((v + b) mod 2^n) - b with
 * b = 2^(n-1) - 1: the field shifted down, b added, masked, b taken off.
 */
TSC_INLINE uint64_t dod_field(uint64_t win, uint64_t *pos, unsigned prefix, unsigned payload)
{
    uint64_t bias = (UINT64_C(1) << (payload - 1)) - 1, mask = (UINT64_C(1) << payload) - 1;
    *pos += prefix + payload;
    return (((win >> (64 - prefix - payload)) + bias) & mask) - bias;
}

/* The dod field at *pos, whose bits the caller loaded (win). Branches on the bucket, as codec 1's decode_dod does
 * (lib/chunk/iterator.c, why): where it predicts, the next position does not wait for this field's bits (a table
 * of lengths put a second load on that chain). */
TSC_INLINE uint64_t read_dod(const uint8_t *base, size_t len, uint64_t *pos, uint64_t win, int checked)
{
    if (!(win >> 63)) {
        *pos += 1;
        return 0;
    }
    if (!(win >> 62 & 1)) return dod_field(win, pos, 2, 14);
    if (!(win >> 61 & 1)) return dod_field(win, pos, 3, 17);
    if (!(win >> 60 & 1)) return dod_field(win, pos, 4, 20);
    uint64_t dod = tsc_peek_wide_if(base, len, *pos + 4, 64, checked);
    *pos += 68;
    return dod;
}

/* Sets the window (lead, width) and its mask. (A window past bit 0, lead + width > 64, is refused: bad.) */
TSC_INLINE void set_window(run_state *st, unsigned lead, unsigned width)
{
    st->lead = lead;
    st->width = width;
    st->shift = (64 - lead - width) & 63;
    st->mask = (~UINT64_C(0) >> (64 - width)) << st->shift;
}

/* The window's bits of a field whose first bit is at the top of bits. The unchecked loops shift it down by the
 * lead and clear what follows with the mask they hold while the window is reused; the checked ones (the
 * iterator's step sets the window up at every call) use two shifts and leave the mask unused. */
TSC_INLINE uint64_t window_bits(const run_state *st, uint64_t bits, int checked)
{
    if (checked) return (bits >> (64 - st->width)) << st->shift;
    return (bits >> st->lead) & st->mask;
}

/* A field of more than `valid - prefix` bits, read again from the stream (two loads). */
TSC_INLINE uint64_t window_bits_wide(const uint8_t *base, size_t len, const run_state *st, uint64_t pos,
                                     int checked)
{
    return tsc_peek_wide_if(base, len, pos, st->width, checked) << st->shift;
}

/* The XOR field at pos: `0`, `10` + window bits, `11` + 5-bit lead + 6-bit size (0 is 64) + size bits. Its first
 * `valid` bits (at least 56) are at the top of win; a field longer than that is read again from the stream. */
TSC_INLINE uint64_t read_xor_in(const uint8_t *base, size_t len, run_state *st, uint64_t pos, uint64_t win,
                                unsigned valid, int checked)
{
    if (!(win >> 63)) {
        st->pos = pos + 1;
        return 0;
    }
    if (!((win >> 62) & 1)) {
        st->pos = pos + 2 + st->width;
        if (TSC_LIKELY(st->width <= valid - 2)) return window_bits(st, win << 2, checked);
        return window_bits_wide(base, len, st, pos + 2, checked);
    }
    unsigned size = (unsigned)(win >> 51) & 63;
    set_window(st, (unsigned)(win >> 57) & 31, size ? size : 64);
    st->bad |= st->lead + st->width > 64;
    st->pos = pos + 13 + st->width;
    if (TSC_LIKELY(st->width <= valid - 13)) return window_bits(st, win << 13, checked);
    return window_bits_wide(base, len, st, pos + 13, checked);
}

TSC_INLINE uint64_t read_xor(const uint8_t *base, size_t len, run_state *st, uint64_t pos, int checked)
{
    return read_xor_in(base, len, st, pos, tsc_peek_if(base, len, pos, checked), TSC_BITS_MAX_FIELD, checked);
}

/*
 * One sample. `0` `0` (the step and the value unchanged: constant series
 * scraped on time, a large share of a TSDB's series) takes a short cut; after
 * a dod `0` (a steady step) the XOR field is read from the same load.
 */
TSC_INLINE void read_sample(const uint8_t *base, size_t len, run_state *st, int checked)
{
    uint64_t pos = st->pos, win = tsc_peek_if(base, len, pos, checked);
    unsigned top = (unsigned)(win >> 62); /* one test for the three common cases */
    if (top == 0) {
        st->pos = pos + 2;
    } else if (top == 1) {
        st->bits ^= read_xor_in(base, len, st, pos + 1, win << 1, TSC_BITS_MAX_FIELD - 1, checked);
    } else {
        st->delta += top == 2 ? dod_field(win, &pos, 2, 14) : read_dod(base, len, &pos, win, checked);
        st->bits ^= read_xor(base, len, st, pos, checked);
    }
    st->ts = (int64_t)((uint64_t)st->ts + st->delta);
}

/* Samples while k < n and (unchecked) while pos <= fast_end. @return samples decoded. */
TSC_INLINE size_t run_loop(const uint8_t *restrict base, size_t len, uint64_t fast_end, run_state *restrict io,
                           int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n, int checked)
{
    run_state st = *io;
    size_t k = 0;
    /* Unchecked, two samples a test of the limits (where the first can take its most bits, the second still fits). */
    if (!checked && fast_end >= SAMPLE_BITS_MAX) {
        for (; k + 2 <= n && st.pos <= fast_end - SAMPLE_BITS_MAX; k += 2) {
            read_sample(base, len, &st, checked);
            ts_out[k] = st.ts;
            val_out[k] = st.bits;
            read_sample(base, len, &st, checked);
            ts_out[k + 1] = st.ts;
            val_out[k + 1] = st.bits;
        }
    }
    for (; k < n && (checked || st.pos <= fast_end); k++) {
        read_sample(base, len, &st, checked);
        ts_out[k] = st.ts;
        val_out[k] = st.bits;
    }
    *io = st;
    return k;
}

static size_t run_unchecked(const uint8_t *restrict base, uint64_t fast_end, run_state *restrict io,
                            int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n)
{
    return run_loop(base, 0, fast_end, io, ts_out, val_out, n, 0);
}

#ifdef TSC_HAVE_AVX2
TSC_BMI_TARGET static size_t run_unchecked_bmi2(const uint8_t *restrict base, uint64_t fast_end, run_state *restrict io,
                                                int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n)
{
    return run_loop(base, 0, fast_end, io, ts_out, val_out, n, 0);
}
#endif

size_t tschunk_prom_count(const void *chunk, size_t size)
{
    if (!chunk) return TSC_ERROR(BAD_PARAMETER);
    if (size < 2) return TSC_ERROR(TRUNCATED);
    const uint8_t *p = (const uint8_t *)chunk;
    return (size_t)p[0] << 8 | p[1];
}

size_t tschunk_prom_iter_init(tschunk_prom_iter *it, const void *chunk, size_t size)
{
    if (!it) return TSC_ERROR(BAD_PARAMETER);
    size_t count = tschunk_prom_count(chunk, size);
    if (tsc_is_error(count)) return count;
    /* Sample 0 takes at least 9 bytes, every later one at least 2 bits. */
    if (count && (size - 2 < 9 || (uint64_t)(size - 2 - 9) * 8 < (uint64_t)(count - 1) * 2))
        return TSC_ERROR(TRUNCATED);
    memset(it, 0, offsetof(tschunk_prom_iter, run_ts)); /* the run buffer is written before it is read */
    it->chunk = (const uint8_t *)chunk;
    it->size = size;
    it->count = (uint32_t)count;
    it->window_width = 64;
    tsc_br_init(&it->in, it->chunk + 2, size - 2);
    return 0;
}

/* Samples 0 and 1 start byte-aligned with varints. */
static size_t step_first(tschunk_prom_iter *it)
{
    const uint8_t *p = it->in.base + (it->in.bit_pos >> 3);
    size_t avail = it->in.byte_len - (size_t)(it->in.bit_pos >> 3);
    uint64_t v;
    size_t n = go_uvarint(p, avail, &v);
    if (n == 0) return fail(it, avail < 10 ? TSCHUNK_ERROR_TRUNCATED : TSCHUNK_ERROR_CORRUPT);
    it->in.bit_pos += n * 8;
    if (it->index == 0) {
        if (avail - n < 8) return fail(it, TSCHUNK_ERROR_TRUNCATED);
        it->ts = tsc_unzigzag(v);
        it->bits = tsc_load64_be(p + n);
        it->in.bit_pos += 64;
    } else {
        it->delta = v;
        it->ts = (int64_t)((uint64_t)it->ts + v);
        run_state st = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        set_window(&st, it->window_lead, it->window_width);
        it->bits ^= read_xor(it->in.base, it->in.byte_len, &st, it->in.bit_pos, 1);
        it->in.bit_pos = st.pos;
        if (st.bad) return fail(it, TSCHUNK_ERROR_CORRUPT);
        if (tsc_br_overrun(&it->in)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
        it->window_lead = (uint8_t)st.lead;
        it->window_width = (uint8_t)st.width;
    }
    it->index++;
    return 0;
}

/* One chunk of a pair: its bytes, the unchecked loop's limit, its state and where its samples go. */
typedef struct {
    const uint8_t *base;
    uint64_t fast_end;
    run_state st;
    int64_t *ts;
    uint64_t *bits;
} lane;

/*
 * Two chunks' samples in one unchecked loop. Each chunk's samples form one
 * serial chain (a field's length is known only once it is read); decoding two
 * chunks side by side lets the CPU run the two chains at once.
 * @return samples decoded from each chunk.
 */
TSC_INLINE size_t pair_loop(lane *restrict a, lane *restrict b, size_t n)
{
    run_state sa = a->st, sb = b->st;
    const uint8_t *base_a = a->base, *base_b = b->base;
    size_t k = 0;
    for (; k < n && sa.pos <= a->fast_end && sb.pos <= b->fast_end; k++) {
        read_sample(base_a, 0, &sa, 0);
        read_sample(base_b, 0, &sb, 0);
        a->ts[k] = sa.ts;
        a->bits[k] = sa.bits;
        b->ts[k] = sb.ts;
        b->bits[k] = sb.bits;
    }
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

static size_t run_unchecked_any(const uint8_t *restrict base, uint64_t fast_end, run_state *restrict io,
                                int64_t *restrict ts_out, uint64_t *restrict val_out, size_t n, int loops)
{
#ifdef TSC_HAVE_AVX2
    if (loops != TSC_LOOPS_SCALAR && tsc_bmi_here())
        return run_unchecked_bmi2(base, fast_end, io, ts_out, val_out, n);
#else
    (void)loops; /* one loop only */
#endif
    return run_unchecked(base, fast_end, io, ts_out, val_out, n);
}

/* Real bytes a tail copy takes: more than the unchecked loop leaves (FAST_MARGIN bits). */
#define TAIL_BYTES 32

/*
 * The chunk's last bytes, copied ahead of FAST_MARGIN bits of zeros, run
 * through the unchecked loop: the zeros are what the checked loop would read
 * past the end, so the samples are the same, without a check per load.
 * @return samples decoded (it stops where a sample could reach past the zeros).
 */
static size_t run_tail(const uint8_t *restrict base, size_t len, run_state *restrict io, int64_t *restrict ts_out,
                       uint64_t *restrict val_out, size_t n, int loops)
{
    size_t from = (size_t)(io->pos >> 3);
    if (from > len || len - from > TAIL_BYTES) return 0;
    uint8_t tail[TAIL_BYTES + (FAST_MARGIN + 7) / 8 + 8] = {0};
    memcpy(tail, base + from, len - from);
    uint64_t rebase = (uint64_t)from * 8;
    io->pos -= rebase;
    size_t k = run_unchecked_any(tail, sizeof tail * 8 - FAST_MARGIN, io, ts_out, val_out, n, loops);
    io->pos += rebase;
    return k;
}

static run_state load_state(const tschunk_prom_iter *it)
{
    run_state st = {it->in.bit_pos, it->delta, it->bits, it->ts, 0, 0, 0, 0, 0};
    set_window(&st, it->window_lead, it->window_width);
    return st;
}

/* Keeps n decoded samples' state, or the error they met (sticky). @return n or the error. */
static size_t save_state(tschunk_prom_iter *it, const run_state *st, size_t n)
{
    if (TSC_UNLIKELY(st->bad)) return fail(it, TSCHUNK_ERROR_CORRUPT);
    if (TSC_UNLIKELY(st->pos > it->in.bit_len)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
    it->in.bit_pos = st->pos;
    it->delta = st->delta;
    it->ts = st->ts;
    it->bits = st->bits;
    it->window_lead = (uint8_t)st->lead;
    it->window_width = (uint8_t)st->width;
    it->index += (uint32_t)n;
    return n;
}

/* Below this many samples the unchecked loop's dispatch is not worth it (the iterator's steps). */
#define FAST_MIN_SAMPLES 8

/*
 * Samples 2.. in register loops: unchecked while the chunk has room, checked
 * after that (reads past the end see zeros; an overrun is reported once, at
 * the end).
 * @return samples decoded, or an error.
 */
static size_t decode_run(tschunk_prom_iter *restrict it, int64_t *restrict ts_out, uint64_t *restrict val_out,
                         size_t n, int loops)
{
    const uint8_t *base = it->in.base;
    const size_t len = it->in.byte_len;
    run_state st = load_state(it);
    size_t k = 0;
    if (n >= FAST_MIN_SAMPLES && loops != TSC_LOOPS_CHECKED) {
        if (it->in.bit_len >= FAST_MARGIN)
            k = run_unchecked_any(base, it->in.bit_len - FAST_MARGIN, &st, ts_out, val_out, n, loops);
        if (k < n) k += run_tail(base, len, &st, ts_out + k, val_out + k, n - k, loops);
    }
    run_loop(base, len, 0, &st, ts_out + k, val_out + k, n - k, 1);
    return save_state(it, &st, n);
}

TSC_HOT_ALIGN static size_t step(tschunk_prom_iter *it)
{
    if (TSC_UNLIKELY(it->index < 2)) return step_first(it);
    uint64_t pos = it->in.bit_pos, win = tsc_peek(it->in.base, it->in.byte_len, pos);
    if (!(win >> 62)) { /* `0` `0`: same step, same value */
        if (TSC_UNLIKELY(pos + 2 > it->in.bit_len)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
        it->in.bit_pos = pos + 2;
        it->ts = (int64_t)((uint64_t)it->ts + it->delta);
        it->index++;
        return 0;
    }
    run_state st = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    set_window(&st, it->window_lead, it->window_width);
    uint64_t delta = it->delta + read_dod(it->in.base, it->in.byte_len, &pos, win, 1);
    uint64_t bits = it->bits ^ read_xor(it->in.base, it->in.byte_len, &st, pos, 1);
    if (TSC_UNLIKELY(st.bad)) return fail(it, TSCHUNK_ERROR_CORRUPT);
    if (TSC_UNLIKELY(st.pos > it->in.bit_len)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
    it->in.bit_pos = st.pos;
    it->delta = delta;
    it->ts = (int64_t)((uint64_t)it->ts + delta);
    it->bits = bits;
    it->window_lead = (uint8_t)st.lead;
    it->window_width = (uint8_t)st.width;
    it->index++;
    return 0;
}

/*
 * The iterator's next run of samples (past the first two) decoded by the
 * batch loop into its run buffer, where a step a sample took about twice the
 * instructions. The stream state (index, ts, bits) is the run's last sample's;
 * the samples come out of the buffer by run_at alone. A damaged run is
 * dropped and the samples are stepped one at a time from there, so that the
 * error comes at the sample it always came at (a run that decodes is what
 * the steps read: the loops' reads are the step's, and positions only grow).
 */
static void fill_run_buffer(tschunk_prom_iter *it)
{
    uint32_t left = it->count - it->index;
    it->run_at = it->run_len = 0;
    if (it->index < 2 || left < 2 || it->step_only) return;
    uint32_t n = left < TSCHUNK_PROM_RUN_SAMPLES ? left : TSCHUNK_PROM_RUN_SAMPLES;
    if (tsc_is_error(decode_run(it, it->run_ts, it->run_bits, n, TSC_LOOPS_AUTO))) {
        it->error = 0; /* decode_run's sticky error, left to the steps */
        it->step_only = 1;
        return;
    }
    it->run_len = n;
}

void tsc_prom_iter_step_only(tschunk_prom_iter *it) { it->step_only = 1; }

/* Everything but a buffered sample (whose buffer is used up here): out of line, so that the fast path keeps
 * no frame. */
__attribute__((noinline)) static size_t next_slow(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    if (it->pending) { /* seek stopped on a stepped sample */
        it->pending = 0;
    } else {
        if (it->index >= it->count) return 0;
        fill_run_buffer(it);
        if (it->run_len) return tschunk_prom_iter_next_bits(it, ts, value_bits);
        size_t err = step(it);
        if (err) return err;
    }
    if (ts) *ts = it->ts;
    if (value_bits) *value_bits = it->bits;
    return 1;
}

TSC_HOT_ALIGN size_t tschunk_prom_iter_next_bits(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits)
{
    uint32_t at = it->run_at;
    if (TSC_LIKELY(at < it->run_len)) { /* never with an error or a pending sample: both come from steps */
        it->run_at = at + 1;
        if (ts) *ts = it->run_ts[at];
        if (value_bits) *value_bits = it->run_bits[at];
        return 1;
    }
    return next_slow(it, ts, value_bits);
}

/* tschunk_prom_iter_next_inline's slow path: its name says which iterator fields that inline code relies on. */
_Static_assert(TSCHUNK_ITER_LAYOUT == 1, "a new iterator layout renames tschunk_prom_iter_next_bits_layout1");
size_t tschunk_prom_iter_next_bits_layout1(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits)
{
    return tschunk_prom_iter_next_bits(it, ts, value_bits);
}

size_t tschunk_prom_iter_next(tschunk_prom_iter *it, int64_t *ts, double *value)
{
    uint64_t bits = 0;
    size_t r = tschunk_prom_iter_next_bits(it, ts, &bits);
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}

size_t tschunk_prom_iter_seek(tschunk_prom_iter *it, int64_t t)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    if (it->index > 0) { /* time may go back in these chunks: the first match is searched from the start */
        size_t err = tschunk_prom_iter_init(it, it->chunk, it->size);
        if (err) return err;
    }
    for (;;) {
        for (; it->run_at < it->run_len; it->run_at++)
            if (it->run_ts[it->run_at] >= t) return 1; /* left in the buffer for next */
        if (it->index >= it->count) return 0;
        fill_run_buffer(it);
        if (it->run_len) continue;
        size_t err = step(it);
        if (err) return err;
        if (it->ts >= t) {
            it->pending = 1;
            return 1;
        }
    }
}

#define READ_BLOCK 256

static size_t read_samples(tschunk_prom_iter *restrict it, int64_t *restrict ts, double *restrict values,
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
    /* what the iterator decoded ahead */
    n += tsc_take_buffered(it->run_ts, it->run_bits, &it->run_at, it->run_len, ts, values, n, capacity);
    while (n < capacity && it->index < it->count) {
        if (it->index < 2) {
            size_t err = step_first(it);
            if (err) return err;
            if (ts) ts[n] = it->ts;
            if (values) memcpy(&values[n], &it->bits, 8);
            n++;
            continue;
        }
        int direct = ts && values;
        size_t want = it->count - it->index;
        if (want > capacity - n) want = capacity - n;
        if (!direct && want > READ_BLOCK) want = READ_BLOCK;
        size_t got = decode_run(it, direct ? ts + n : ts_tmp,
                                direct ? (uint64_t *)(void *)(values + n) : bits_tmp, want, loops);
        if (TSC_UNLIKELY(tsc_is_error(got))) return got;
        if (!direct) {
            if (ts) memcpy(ts + n, ts_tmp, got * sizeof *ts);
            if (values) memcpy(values + n, bits_tmp, got * sizeof *values);
        }
        n += got;
    }
    return n;
}

size_t tschunk_prom_iter_read(tschunk_prom_iter *restrict it, int64_t *restrict ts, double *restrict values,
                              size_t capacity)
{
    return read_samples(it, ts, values, capacity, TSC_LOOPS_AUTO);
}

size_t tsc_prom_decode_with(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity, int loops)
{
    tschunk_prom_iter it;
    size_t err = tschunk_prom_iter_init(&it, chunk, size);
    if (err) return err;
    if (it.count > capacity) return TSC_ERROR(DST_TOO_SMALL);
    return read_samples(&it, ts, values, capacity, loops);
}

/*
 * Samples 2.. of two chunks (both past their first two samples) as far as
 * the pair loop takes them side by side; each chunk's rest is left to
 * read_samples. @return samples decoded from each, or an error.
 */
static size_t decode_pair(tschunk_prom_iter *a, int64_t *ts_a, double *values_a, tschunk_prom_iter *b,
                          int64_t *ts_b, double *values_b, int loops)
{
    size_t n = a->count - a->index < b->count - b->index ? a->count - a->index : b->count - b->index;
    if (n < FAST_MIN_SAMPLES || loops == TSC_LOOPS_CHECKED) return 0;
    if (a->in.bit_len < FAST_MARGIN || b->in.bit_len < FAST_MARGIN) return 0;
    lane la = {a->in.base, a->in.bit_len - FAST_MARGIN, load_state(a), ts_a, (uint64_t *)(void *)values_a};
    lane lb = {b->in.base, b->in.bit_len - FAST_MARGIN, load_state(b), ts_b, (uint64_t *)(void *)values_b};
    size_t k;
#ifdef TSC_HAVE_AVX2
    if (loops != TSC_LOOPS_SCALAR && tsc_bmi_here()) k = pair_unchecked_bmi2(&la, &lb, n);
    else
#endif
        k = pair_unchecked(&la, &lb, n);
    size_t r = save_state(a, &la.st, k);
    if (tsc_is_error(r)) return r;
    return save_state(b, &lb.st, k);
}

/* Chunks i and i + 1 (when there is one) into ts/values from `at`. @return samples written or an error. */
static size_t decode_two(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks, int64_t *ts,
                         double *values, int loops)
{
    tschunk_prom_iter it[2];
    size_t lanes = i + 1 < n_chunks ? 2 : 1, at[2] = {0, 0}, r;
    for (size_t l = 0; l < lanes; l++) {
        r = tschunk_prom_iter_init(&it[l], chunks[i + l], sizes[i + l]);
        if (r) return r;
        at[l] = l ? it[0].count : 0;
        r = read_samples(&it[l], ts + at[l], values + at[l], it[l].count < 2 ? it[l].count : 2, loops);
        if (tsc_is_error(r)) return r;
        at[l] += r;
    }
    if (lanes == 2) {
        r = decode_pair(&it[0], ts + at[0], values + at[0], &it[1], ts + at[1], values + at[1], loops);
        if (tsc_is_error(r)) return r;
        at[0] += r;
        at[1] += r;
    }
    size_t total = 0;
    for (size_t l = 0; l < lanes; l++) {
        r = read_samples(&it[l], ts + at[l], values + at[l], it[l].count - it[l].index, loops);
        if (tsc_is_error(r)) return r;
        total += it[l].count;
    }
    return total;
}

#ifdef TSC_HAVE_AVX2
static run_state lane_state(const tsc_prom_lane *chunk)
{
    run_state st = {chunk->pos, chunk->delta, chunk->bits, chunk->ts, 0, 0, 0, 0, chunk->bad};
    set_window(&st, chunk->lead, chunk->width);
    return st;
}

/* The kernel reads 32 bytes from a step's first byte (fewer, then zeros, past the stream's last 32). */
#define LANE_BYTES 32

/* One sample of every lane with the checked loop (the step the kernel stopped before). */
static void lanes_scalar_step(tsc_prom_lane *lanes, size_t count)
{
    for (size_t l = 0; l < count; l++) {
        run_state st = lane_state(&lanes[l]);
        size_t byte_len = (size_t)(lanes[l].last_byte + LANE_BYTES);
        run_loop(lanes[l].base, byte_len, 0, &st, lanes[l].ts_out, lanes[l].bits_out, 1, 1);
        lanes[l] = (tsc_prom_lane){lanes[l].base, lanes[l].last_byte, st.pos, st.delta, st.bits, st.ts, st.lead,
                                   st.width, st.bad, lanes[l].ts_out + 1, lanes[l].bits_out + 1};
    }
}

/* A lane without a chunk reads zeros (`0` `0`: dod 0, the same value; two bits a step) into a scratch. */
static const uint8_t idle_stream[LANE_BYTES + TSC_LANE_IDLE_STEPS / 4 + 8];

/* A list of Prometheus chunks in the lanes (tsc_lane_list_decode): each slot's iterator and lane. */
typedef struct {
    tsc_lane_list list;
    tschunk_prom_iter it[TSC_LIST_LANES];
    tsc_prom_lane lane[TSC_LIST_LANES];
    int64_t idle_ts[TSC_LANE_IDLE_STEPS + 1];
    uint64_t idle_bits[TSC_LANE_IDLE_STEPS + 1];
    int avx512; /* the AVX-512 kernels, else the AVX2 ones */
} prom_lanes;

/*
 * Chunk j's first two samples (varints) with the iterator, then the lanes for the rest. A chunk too short for
 * them, or under a byte a sample (mostly `00`: a constant series scraped on time, which the scalar loop's
 * shortcut takes faster), is decoded whole here.
 */
static size_t start_chunk(tsc_lane_list *list, size_t slot, size_t j, size_t at, size_t *count)
{
    prom_lanes *P = (prom_lanes *)list;
    tschunk_prom_iter *it = &P->it[slot];
    size_t r = tschunk_prom_iter_init(it, list->chunks[j], list->sizes[j]);
    if (r) return r;
    *count = it->count;
    int64_t *ts = list->ts + at;
    double *values = list->values + at;
    r = read_samples(it, ts, values, it->count < 2 ? it->count : 2, list->loops);
    if (tsc_is_error(r)) return r;
    size_t left = it->count - it->index;
    if (left < FAST_MIN_SAMPLES || list->sizes[j] < it->count) {
        r = read_samples(it, ts + r, values + r, left, list->loops);
        return tsc_is_error(r) ? r : 0;
    }
    list->left[slot] = left;
    P->lane[slot] = (tsc_prom_lane){it->in.base, (uint64_t)it->in.byte_len - LANE_BYTES, it->in.bit_pos, it->delta,
                                    it->bits, it->ts, it->window_lead, it->window_width, 0, ts + r,
                                    (uint64_t *)(void *)(values + r)};
    return 1;
}

static void idle_lanes(tsc_lane_list *list, size_t width)
{
    prom_lanes *P = (prom_lanes *)list;
    for (size_t l = list->live; l < width; l++)
        P->lane[l] = (tsc_prom_lane){idle_stream, sizeof idle_stream - LANE_BYTES, 0, 0, 0, 0, 0, 64, 0,
                                     P->idle_ts, P->idle_bits};
}

static size_t run_kernel(tsc_lane_list *list, size_t width, size_t n, int *escaped)
{
    prom_lanes *P = (prom_lanes *)list;
    if (!P->avx512)
        return width == 16 ? tsc_prom_lanes16_avx2(P->lane, n, escaped) : tsc_prom_lanes8_avx2(P->lane, n, escaped);
    return width == 16 ? tsc_prom_lanes16_avx512(P->lane, n, escaped) : tsc_prom_lanes8_avx512(P->lane, n, escaped);
}

static void scalar_step(tsc_lane_list *list, size_t width) { lanes_scalar_step(((prom_lanes *)list)->lane, width); }

/* The lane's state back into the slot's iterator (checked: a bad window, a stream overrun). */
static size_t finish_chunk(tsc_lane_list *list, size_t slot)
{
    prom_lanes *P = (prom_lanes *)list;
    run_state st = lane_state(&P->lane[slot]);
    tschunk_prom_iter *it = &P->it[slot];
    size_t r = save_state(it, &st, it->count - it->index - list->left[slot]);
    return tsc_is_error(r) ? r : 0;
}

/* The last few chunks, each past its lanes' samples: two at a time, then each one's rest. */
static size_t drain_chunks(tsc_lane_list *list)
{
    prom_lanes *P = (prom_lanes *)list;
    size_t r = 0;
    for (size_t l = 0; !r && l < list->live; l++) r = finish_chunk(list, l);
    for (size_t l = 0; !r && l < list->live; l += 2) {
        int64_t *ts[2] = {P->lane[l].ts_out, l + 1 < list->live ? P->lane[l + 1].ts_out : NULL};
        double *values[2] = {(double *)(void *)P->lane[l].bits_out,
                             l + 1 < list->live ? (double *)(void *)P->lane[l + 1].bits_out : NULL};
        size_t pair =
            ts[1] ? decode_pair(&P->it[l], ts[0], values[0], &P->it[l + 1], ts[1], values[1], list->loops) : 0;
        if (tsc_is_error(pair)) return pair;
        for (size_t m = 0; m < 2 && ts[m] && !r; m++) {
            tschunk_prom_iter *it = &P->it[l + m];
            size_t got = read_samples(it, ts[m] + pair, values[m] + pair, it->count - it->index, list->loops);
            r = tsc_is_error(got) ? got : 0;
        }
    }
    return r;
}

static void move_chunk(tsc_lane_list *list, size_t to, size_t from)
{
    prom_lanes *P = (prom_lanes *)list;
    memcpy(&P->it[to], &P->it[from], offsetof(tschunk_prom_iter, run_ts)); /* the lanes fill no run buffer */
    P->lane[to] = P->lane[from];
}

static const tsc_lane_ops prom_lane_ops = {start_chunk, finish_chunk, drain_chunks, move_chunk,
                                           idle_lanes, run_kernel, scalar_step, tschunk_prom_count};

/* Chunks i.. into ts/values in the AVX-512 or AVX2 lanes (tsc_lane_list_decode). @return samples written or an
 * error. */
static size_t decode_in_lanes(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks,
                              int64_t *ts, double *values, int loops, int avx512)
{
    prom_lanes P;
    P.list = (tsc_lane_list){chunks, sizes, n_chunks, 0, ts, values, 0, loops, 0, {0}, {0}};
    P.avx512 = avx512;
    return tsc_lane_list_decode(&P.list, i, &prom_lane_ops);
}
#endif

/* Chunks i.. (all of them): in AVX-512 lanes when the CPU has them, else in AVX2 lanes, else two at a time. */
static size_t decode_some(const void *const *chunks, const size_t *sizes, size_t i, size_t n_chunks, int64_t *ts,
                          double *values, int loops)
{
#ifdef TSC_HAVE_AVX2
    if (n_chunks - i >= 8 && (loops == TSC_LOOPS_AUTO || loops == TSC_LOOPS_AVX2)) {
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

size_t tsc_prom_decode_chunks_with(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                   double *values, size_t capacity, int loops)
{
    return tsc_decode_chunk_list(chunks, sizes, n_chunks, ts, values, capacity, loops, tschunk_prom_count,
                                 SIZE_MAX, decode_some);
}

size_t tschunk_prom_decode_chunks(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                                  double *values, size_t capacity)
{
    return tsc_prom_decode_chunks_with(chunks, sizes, n_chunks, ts, values, capacity, TSC_LOOPS_AUTO);
}

size_t tschunk_prom_decode(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity)
{
    return tsc_prom_decode_with(chunk, size, ts, values, capacity, TSC_LOOPS_AUTO);
}
