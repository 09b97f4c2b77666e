/*
 * Prometheus XOR chunk encoder: the bytes Prometheus 3.x's XORChunk appender
 * produces (README "Prometheus XOR chunks" lists the layout). One bit stream
 * from byte 2 on, MSB first, timestamp and value fields interleaved; the
 * big-endian sample count at bytes 0-1 is rewritten after every append, so
 * the buffer holds a complete chunk at all times.
 */
#include "../common/common.h"
#include "../codec/bitstream.h"

enum { STAGE_ACTIVE = 0x5a, STAGE_FINISHED = 0xa5 };

#define NO_WINDOW 0xffu
#define SLACK 8u
#define LEAD_MAX 31u
#define WORST_SAMPLE_BITS (68u + 77u)

size_t tschunk_prom_bound(size_t n)
{
    return n > TSCHUNK_PROM_MAX_SAMPLES ? 0 : TSCHUNK_PROM_BOUND(n);
}

/* Bits of a dod field: `0`, `10`+14, `110`+17, `1110`+20, `1111`+64. The
 * ranges are Prometheus' asymmetric ones: -(2^(n-1)-1) .. 2^(n-1). */
TSC_INLINE unsigned dod_payload(int64_t dod)
{
    if (dod == 0) return 0;
    if (dod >= -8191 && dod <= 8192) return 14;
    if (dod >= -65535 && dod <= 65536) return 17;
    if (dod >= -524287 && dod <= 524288) return 20;
    return 64;
}

TSC_INLINE unsigned dod_field_bits(unsigned payload)
{
    return payload == 0 ? 1 : payload == 14 ? 16 : payload == 17 ? 20 : payload == 20 ? 24 : 68;
}

TSC_INLINE void write_dod(tschunk_bit_writer *w, int64_t dod, unsigned payload)
{
    switch (payload) {
    case 0: tsc_bw_put(w, 0, 1); break;
    case 14: tsc_bw_put(w, UINT64_C(0x2) << 14 | ((uint64_t)dod & 0x3fff), 16); break;
    case 17: tsc_bw_put(w, UINT64_C(0x6) << 17 | ((uint64_t)dod & 0x1ffff), 20); break;
    case 20: tsc_bw_put(w, UINT64_C(0xe) << 20 | ((uint64_t)dod & 0xfffff), 24); break;
    default: tsc_bw_put_long(w, 0xf, 4, (uint64_t)dod, 64); break;
    }
}

/* XOR field: `0` same; `10` + window bits; `11` + 5-bit lead + 6-bit size (64 as 0) + size bits. */
typedef struct {
    uint64_t head, payload;
    unsigned head_len, payload_len;
    unsigned lead, trail;
} value_field;

TSC_INLINE value_field plan_value(const tschunk_prom_encoder *enc, uint64_t bits)
{
    value_field f = {0, 0, 1, 0, enc->window_lead, enc->window_trail};
    uint64_t x = bits ^ enc->prev_bits;
    if (x == 0) return f;
    unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
    if (lead > LEAD_MAX) lead = LEAD_MAX;
    /* NO_WINDOW fails the first test: the first change always opens a window. */
    if (lead >= enc->window_lead && trail >= enc->window_trail) {
        f.head = 0x2;
        f.head_len = 2;
        f.payload_len = 64 - enc->window_lead - enc->window_trail;
        f.payload = x >> enc->window_trail;
        return f;
    }
    unsigned size = 64 - lead - trail;
    f.head = UINT64_C(0x3) << 11 | (uint64_t)lead << 6 | (size & 63);
    f.head_len = 13;
    f.payload_len = size;
    f.payload = x >> trail;
    f.lead = lead;
    f.trail = trail;
    return f;
}

TSC_INLINE void write_value(tschunk_prom_encoder *enc, const value_field *f)
{
    if (f->head_len + f->payload_len <= TSC_BITS_MAX_FIELD) {
        tsc_bw_put(&enc->out, f->head << f->payload_len | f->payload, f->head_len + f->payload_len);
    } else {
        tsc_bw_put_long(&enc->out, f->head, f->head_len, f->payload, f->payload_len);
    }
    enc->window_lead = (uint8_t)f->lead;
    enc->window_trail = (uint8_t)f->trail;
}

/* Both fields of a sample; the commonest (a dod of at most 14 bits, an XOR field of at most 41) in one write.
 * Its own formula rather than put_sample_code's: sharing that cost the bulk loop ~1% more instructions, and
 * the plain two-write form 2-3.5% (measured in 0.8.0). */
TSC_INLINE void write_sample(tschunk_prom_encoder *enc, int64_t dod, unsigned payload, const value_field *f)
{
    unsigned value_bits = f->head_len + f->payload_len;
    if (payload <= 14 && value_bits <= TSC_BITS_MAX_FIELD - 16) {
        uint64_t dod_code = payload ? UINT64_C(0x2) << 14 | ((uint64_t)dod & 0x3fff) : 0;
        tsc_bw_put(&enc->out, dod_code << value_bits | f->head << f->payload_len | f->payload,
                   (payload ? 16 : 1) + value_bits);
        enc->window_lead = (uint8_t)f->lead;
        enc->window_trail = (uint8_t)f->trail;
    } else {
        write_dod(&enc->out, dod, payload);
        write_value(enc, f);
    }
}

static void write_uvarint(tschunk_bit_writer *w, uint64_t v)
{
    uint8_t buf[10];
    size_t n = tsc_put_uvarint(buf, v);
    for (size_t i = 0; i < n; i++) tsc_bw_put(w, buf[i], 8);
}

/* One more sample: the big-endian count at bytes 0-1 rewritten. */
TSC_INLINE void count_sample(tschunk_prom_encoder *enc)
{
    uint32_t count = ++enc->count;
    enc->dst[0] = (uint8_t)(count >> 8);
    enc->dst[1] = (uint8_t)count;
}

/* The sample is written: advance the state and rewrite the count. */
TSC_INLINE void commit_sample(tschunk_prom_encoder *enc, int64_t ts, uint64_t bits)
{
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    count_sample(enc);
}

/*
 * The stream length below which the worst sample (WORST_SAMPLE_BITS) passes
 * both the buffer's and max_bytes' limits, so that the append's fast path
 * needs no exact check. Bounded by the largest chunk's bit count, so it fits
 * a size_t on 32-bit targets too. The encoder holds 0 (no fast path) until
 * the second sample is in and after finish, so that the fast path needs no
 * test of its own for the first samples (2-3% of a sample's instructions).
 */
static size_t fast_bit_end(const tschunk_prom_encoder *enc)
{
    uint64_t limit = enc->out.bit_limit;
    if (enc->byte_limit) {
        uint64_t by_bytes = enc->byte_limit > 2 ? (uint64_t)(enc->byte_limit - 2) * 8 : 0;
        limit = by_bytes < limit ? by_bytes : limit;
    }
    uint64_t largest = (uint64_t)TSCHUNK_PROM_BOUND(TSCHUNK_PROM_MAX_SAMPLES) * 8;
    limit = limit < largest ? limit : largest;
    return limit > WORST_SAMPLE_BITS ? (size_t)(limit - WORST_SAMPLE_BITS) + 1 : 0;
}

size_t tschunk_prom_encoder_init(tschunk_prom_encoder *enc, void *dst, size_t capacity,
                                 const tschunk_encoder_options *opts)
{
    if (!enc || !dst) return TSC_ERROR(BAD_PARAMETER);
    tschunk_encoder_options o = {0, 0, 0, 0};
    if (opts) o = *opts;
    /* A max_bytes under the empty chunk (its 2-byte count) is one no finished chunk can keep. */
    if (o.codec != 0 || o.reserved != 0 || o.max_samples > TSCHUNK_PROM_MAX_SAMPLES || o.max_bytes == 1)
        return TSC_ERROR(BAD_PARAMETER);
    if (capacity < TSCHUNK_PROM_BOUND(0)) return TSC_ERROR(DST_TOO_SMALL);
    memset(enc, 0, sizeof(*enc));
    enc->dst = (uint8_t *)dst;
    enc->max_samples = o.max_samples ? o.max_samples : TSCHUNK_PROM_MAX_SAMPLES;
    enc->byte_limit = o.max_bytes;
    enc->window_lead = NO_WINDOW;
    enc->window_trail = NO_WINDOW;
    tsc_bw_init(&enc->out, enc->dst + 2, (uint64_t)(capacity - 2 - SLACK) * 8);
    enc->dst[0] = enc->dst[1] = 0; /* an empty chunk is `00 00` */
    enc->stage = STAGE_ACTIVE;
    enc->isa = (uint8_t)tsc_bmi_here();
    return 0;
}

/* Every limit, exactly, for `bits` more stream bits. */
static size_t admit(const tschunk_prom_encoder *enc, unsigned bits)
{
    if (enc->count >= enc->max_samples) return TSC_ERROR(CHUNK_FULL);
    uint64_t total = enc->out.bit_count + bits;
    if (total > enc->out.bit_limit) return TSC_ERROR(DST_TOO_SMALL);
    if (enc->byte_limit && 2 + ((total + 7) >> 3) > enc->byte_limit) return TSC_ERROR(CHUNK_FULL);
    return 0;
}

static size_t append_first_two(tschunk_prom_encoder *enc, int64_t ts, uint64_t bits)
{
    if (enc->count == 0) {
        size_t err = admit(enc, (unsigned)tsc_uvarint_len(tsc_zigzag(ts)) * 8 + 64);
        if (err) return err;
        write_uvarint(&enc->out, tsc_zigzag(ts));
        tsc_bw_put64(&enc->out, bits, 64);
    } else {
        uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts;
        value_field f = plan_value(enc, bits);
        size_t err = admit(enc, (unsigned)tsc_uvarint_len(delta) * 8 + f.head_len + f.payload_len);
        if (err) return err;
        write_uvarint(&enc->out, delta);
        write_value(enc, &f);
        enc->prev_delta = delta;
        enc->fast_bit_end = fast_bit_end(enc); /* the fast path takes the third sample on */
    }
    commit_sample(enc, ts, bits);
    return 0;
}

/* Everything but the fast path: the stage, the first two samples, and a sample near a limit (checked exactly). */
static __attribute__((noinline)) size_t append_checked(tschunk_prom_encoder *enc, int64_t ts, uint64_t bits)
{
    if (enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    if (enc->count < 2) return append_first_two(enc, ts, bits);
    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts; /* wraps when time goes back, as in Go */
    int64_t dod = (int64_t)(delta - enc->prev_delta);
    unsigned payload = dod_payload(dod);
    value_field f = plan_value(enc, bits);
    size_t err = admit(enc, dod_field_bits(payload) + f.head_len + f.payload_len);
    if (err) return err;
    write_sample(enc, dod, payload, &f);
    enc->prev_delta = delta;
    commit_sample(enc, ts, bits);
    return 0;
}

/* A sample in at most two writes: the head (dod field, the value's control bits) and the XOR payload. */
typedef struct {
    uint64_t head, payload;
    unsigned head_len, payload_len;
} sample_code;

/*
 * The short forms: a dod of 0 or 14 bits, an XOR payload of at most 57 bits
 * when it opens a window. Moves the window only when it succeeds.
 * @return 0 for a sample the general writer (write_sample) must take.
 */
TSC_INLINE int code_short_sample(sample_code *c, int64_t dod, uint64_t x, uint8_t *window_lead,
                                 uint8_t *window_trail)
{
    c->head = 0;
    c->head_len = 1;
    if (dod != 0) {
        if (TSC_UNLIKELY((uint64_t)dod + 8191 > 8191 + 8192)) return 0;
        c->head = UINT64_C(0x2) << 14 | ((uint64_t)dod & 0x3fff);
        c->head_len = 16;
    }
    c->head <<= 1; /* the value's first control bit: 0 for a repeat */
    c->head_len += 1;
    c->payload = 0;
    c->payload_len = 0;
    if (x == 0) return 1;
    unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
    /* Unclamped: a window's lead is at most LEAD_MAX, so clamping first would not change this test. */
    if (lead >= *window_lead && trail >= *window_trail) { /* NO_WINDOW fails this */
        c->head = (c->head | 1) << 1; /* `10` */
        c->head_len += 1;
        c->payload_len = 64u - *window_lead - *window_trail;
        c->payload = x >> *window_trail;
        return 1;
    }
    lead = lead > LEAD_MAX ? LEAD_MAX : lead;
    unsigned size = 64 - lead - trail;
    if (TSC_UNLIKELY(size > TSC_BITS_MAX_FIELD)) return 0;
    c->head = (c->head | 1) << 12 | UINT64_C(1) << 11 | (uint64_t)lead << 6 | size; /* `11` lead size */
    c->head_len += 12;
    c->payload_len = size;
    c->payload = x >> trail;
    *window_lead = (uint8_t)lead;
    *window_trail = (uint8_t)trail;
    return 1;
}

/* One write laid out first: without the hint the counter's short new windows took two jumps (3.5% slower). */
TSC_INLINE void put_sample_code(tschunk_bit_writer *w, const sample_code *c)
{
    if (TSC_LIKELY(c->head_len + c->payload_len <= TSC_BITS_MAX_FIELD)) {
        tsc_bw_put(w, c->head << c->payload_len | c->payload, c->head_len + c->payload_len);
    } else {
        tsc_bw_put_long(w, c->head, c->head_len, c->payload, c->payload_len);
    }
}

/*
 * The fast path: the short forms (code_short_sample). Everything else (the
 * first two samples, the last ones before a limit, long fields, any append
 * after finish, whose fast_bit_end is 0) is a tail call to append_checked,
 * so the fast path keeps few values live and saves few registers. Inlined
 * into both public appends and into append_fast_bmi, each starting a
 * 64-byte line as the iterator's step does (decoder.c): where unrelated
 * changes happened to move it, `bench`'s push took 3-14% longer; a jump
 * from tschunk_prom_append to tschunk_prom_append_bits cost 0.2-0.3 ns a
 * sample.
 */
TSC_INLINE size_t append_fast(tschunk_prom_encoder *restrict enc, int64_t ts, uint64_t bits)
{
    /* `|`: both loads issue at once; gcc still branches on each. */
    if (TSC_UNLIKELY((enc->count >= enc->max_samples) | (enc->out.bit_count >= enc->fast_bit_end)))
        return append_checked(enc, ts, bits);
    uint64_t delta = (uint64_t)ts - (uint64_t)enc->prev_ts; /* wraps when time goes back, as in Go */
    sample_code c;
    if (TSC_UNLIKELY(!code_short_sample(&c, (int64_t)(delta - enc->prev_delta), bits ^ enc->prev_bits,
                                        &enc->window_lead, &enc->window_trail)))
        return append_checked(enc, ts, bits);
    /* Nothing can fail now. The count's bytes last: a byte store through dst may alias the encoder, and
     * before the writes it made them read the writer's fields back (commit_sample's order: gauge-2dp 4.4%
     * slower, the constant and file workloads 5-8%). */
    enc->prev_delta = delta;
    enc->prev_ts = ts;
    enc->prev_bits = bits;
    put_sample_code(&enc->out, &c);
    count_sample(enc);
    return 0;
}

#ifdef TSC_BMI_TARGET
/* The fast path built with BMI1/2, LZCNT and MOVBE (tsc_bmi_here): 8% off a sample of the real files. */
TSC_BMI_TARGET __attribute__((noinline, aligned(64))) static size_t append_fast_bmi(tschunk_prom_encoder *restrict enc,
                                                                                  int64_t ts, uint64_t bits)
{
    return append_fast(enc, ts, bits);
}
#endif

__attribute__((aligned(64))) size_t tschunk_prom_append_bits(tschunk_prom_encoder *restrict enc, int64_t ts,
                                                            uint64_t bits)
{
    return TSC_BMI_CHOOSE(enc, append_fast_bmi(enc, ts, bits), append_fast(enc, ts, bits));
}

/*
 * Samples that certainly fit every limit: as many as start below
 * fast_bit_end (each adds at most WORST_SAMPLE_BITS), within max_samples;
 * none before the third sample or after finish (fast_bit_end 0).
 */
static size_t samples_that_fit(const tschunk_prom_encoder *enc)
{
    if (enc->out.bit_count >= enc->fast_bit_end) return 0;
    uint64_t by_bits = (enc->fast_bit_end - 1 - enc->out.bit_count) / WORST_SAMPLE_BITS + 1;
    uint64_t by_count = enc->count < enc->max_samples ? enc->max_samples - enc->count : 0;
    return (size_t)(by_bits < by_count ? by_bits : by_count);
}

/* How many samples from the first (which is one) repeat the previous step and value, at most 28 (56 zero bits). */
static size_t repeats_of(const int64_t *ts, const double *values, size_t limit, uint64_t delta, uint64_t bits)
{
    size_t run = 1, most = limit < TSC_BITS_MAX_FIELD / 2 ? limit : TSC_BITS_MAX_FIELD / 2;
    while (run < most && (uint64_t)ts[run] - (uint64_t)ts[run - 1] == delta &&
           memcmp(&values[run], &bits, sizeof bits) == 0)
        run++;
    return run;
}

/*
 * `limit` samples that fit (samples_that_fit) on a copy of the state kept in
 * registers, any field form, the count bytes rewritten once at the end.
 */
TSC_INLINE void append_run(tschunk_prom_encoder *restrict enc, const int64_t *restrict ts,
                           const double *restrict values, size_t limit)
{
    tschunk_prom_encoder run = *enc;
    size_t i = 0;
    for (;;) {
        uint64_t bits = 0, delta = 0;
        for (; i < limit; i++) {
            memcpy(&bits, &values[i], sizeof bits);
            delta = (uint64_t)ts[i] - (uint64_t)run.prev_ts; /* wraps when time goes back, as in Go */
            int64_t dod = (int64_t)(delta - run.prev_delta);
            if (dod == 0 && bits == run.prev_bits) break;
            sample_code c;
            if (TSC_LIKELY(code_short_sample(&c, dod, bits ^ run.prev_bits, &run.window_lead, &run.window_trail))) {
                put_sample_code(&run.out, &c);
            } else {
                value_field f = plan_value(&run, bits);
                write_sample(&run, dod, dod_payload(dod), &f);
            }
            run.prev_delta = delta;
            run.prev_ts = ts[i];
            run.prev_bits = bits;
        }
        if (i == limit) break;
        /* Same step, same value: `0` `0`. The whole run in one write of zero bits. */
        size_t repeats = repeats_of(ts + i, values + i, limit - i, delta, bits);
        tsc_bw_put(&run.out, 0, 2 * (unsigned)repeats);
        i += repeats;
        run.prev_ts = ts[i - 1];
    }
    run.count += (uint32_t)limit;
    run.dst[0] = (uint8_t)(run.count >> 8);
    run.dst[1] = (uint8_t)run.count;
    *enc = run;
}

#ifdef TSC_BMI_TARGET
TSC_BMI_TARGET static void append_run_bmi(tschunk_prom_encoder *restrict enc, const int64_t *restrict ts,
                                          const double *restrict values, size_t limit)
{
    append_run(enc, ts, values, limit);
}
#endif

/* append_run in the build init chose (3-8% off a bulk append with BMI). */
static void append_run_chosen(tschunk_prom_encoder *enc, const int64_t *ts, const double *values, size_t limit)
{
    TSC_BMI_CHOOSE(enc, append_run_bmi(enc, ts, values, limit), append_run(enc, ts, values, limit));
}

size_t tschunk_prom_append_many(tschunk_prom_encoder *enc, const int64_t *ts, const double *values, size_t n,
                                size_t *appended)
{
    size_t done = 0, err = 0;
    if (!enc || ((!ts || !values) && n)) err = TSC_ERROR(BAD_PARAMETER);
    while (!err && done < n) {
        size_t fit = samples_that_fit(enc), limit = n - done < fit ? n - done : fit;
        if (limit) {
            append_run_chosen(enc, ts + done, values + done, limit);
            done += limit;
            continue;
        }
        err = tschunk_prom_append(enc, ts[done], values[done]); /* checked: a first sample, a limit, the stage */
        done += !err;
    }
    if (appended) *appended = done;
    return err;
}

__attribute__((aligned(64))) size_t tschunk_prom_append(tschunk_prom_encoder *enc, int64_t ts, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return TSC_BMI_CHOOSE(enc, append_fast_bmi(enc, ts, bits), append_fast(enc, ts, bits));
}

size_t tschunk_prom_encoder_size(const tschunk_prom_encoder *enc)
{
    return 2 + tsc_bw_bytes(&enc->out);
}

size_t tschunk_prom_encoder_finish(tschunk_prom_encoder *enc)
{
    if (!enc) return TSC_ERROR(BAD_PARAMETER);
    if (enc->stage != STAGE_ACTIVE) return TSC_ERROR(STAGE);
    enc->stage = STAGE_FINISHED;
    enc->fast_bit_end = 0; /* later appends take the checked path, which refuses them */
    return tschunk_prom_encoder_size(enc);
}

size_t tschunk_prom_encode(void *dst, size_t capacity, const int64_t *ts, const double *values, size_t n,
                           const tschunk_encoder_options *opts)
{
    if ((!ts || !values) && n) return TSC_ERROR(BAD_PARAMETER);
    if (n > TSCHUNK_PROM_MAX_SAMPLES) return TSC_ERROR(TOO_MANY_SAMPLES);
    tschunk_prom_encoder enc;
    size_t r = tschunk_prom_encoder_init(&enc, dst, capacity, opts);
    if (tsc_is_error(r)) return r;
    r = tschunk_prom_append_many(&enc, ts, values, n, NULL);
    return r ? r : tschunk_prom_encoder_finish(&enc);
}
